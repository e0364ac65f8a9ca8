-- How often the customer moved a booking to another slot herself
-- (RESCHEDULE_LIMIT); the salon's moves are not counted. Existing bookings
-- start at 0.
ALTER TABLE t_booking
  ADD COLUMN reschedules TINYINT UNSIGNED NOT NULL DEFAULT 0;
