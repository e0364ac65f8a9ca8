-- salon_return_seats returns one seat by its row's primary key, locking that
-- row and no gap. 0019's form (UPDATE t_slot JOIN t_booking_slot ... WHERE
-- book_id = ? AND (slot IS NULL OR slot_id = ?), then DELETE with the same
-- condition) was read on MariaDB through idx_booking_slot_slot, whose next-key
-- locks covered the gap after the returned row: until the cancel (or release,
-- or move) committed, a reservation of a later slot could not write its seat
-- row there and waited (TestReturningSeatsLocksNoGap). Now the row is deleted
-- through the primary key, one named row, and the slot's counter goes down
-- only when that row was there, by the slot's key; the result is the same
-- (booked - 1 for the seat the booking held, its row gone). Every booking's
-- seats at once (slot NULL) stays as it was: nothing calls it so today.
-- MySQL 8.0 takes the index hint in a multi-table DELETE as MariaDB does;
-- only MariaDB has run it.

DROP PROCEDURE IF EXISTS salon_return_seats;

DELIMITER //
CREATE PROCEDURE salon_return_seats(
  IN p_book_id BIGINT,
  IN p_slot_id BIGINT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  IF p_slot_id IS NULL THEN
    UPDATE t_slot s JOIN t_booking_slot bs ON bs.slot_id = s.slot_id
      SET s.booked = s.booked - 1
      WHERE bs.book_id = p_book_id;
    DELETE FROM t_booking_slot WHERE book_id = p_book_id;
  ELSE
    DELETE bs FROM t_booking_slot bs FORCE INDEX (PRIMARY) WHERE bs.book_id = p_book_id AND bs.slot_id = p_slot_id;
    IF ROW_COUNT() = 1 THEN
      UPDATE t_slot SET booked = booked - 1 WHERE slot_id = p_slot_id;
    END IF;
  END IF;
END //
DELIMITER ;
