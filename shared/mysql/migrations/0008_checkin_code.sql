-- The check-in code the customer shows at the door: 8 digits, given to a booking
-- the first time it is asked for on its appointment day (shop time), unique among
-- the bookings of that day. Both columns NULL until then; a booking moved to
-- another day gets a fresh code for it.
ALTER TABLE t_booking
  ADD COLUMN checkin_day DATE NULL,
  ADD COLUMN checkin_code CHAR(8) NULL,
  ADD UNIQUE KEY uk_booking_checkin (checkin_day, checkin_code);
