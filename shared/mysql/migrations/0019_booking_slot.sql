-- The seats a booking holds now, one row per slot: t_booking_slot. Today every
-- booking that holds a seat holds exactly one, in its own slot (t_booking.slot_id);
-- a technician's service that spans several cells will hold one per cell. The
-- slot invariant becomes booked = the number of rows of bookings in a status
-- that holds a seat (pending, confirmed, completed, no_show). A row lives
-- exactly as long as the seat: it is written with the seat and deleted when the
-- seat is returned (cancel, release, a move's old slot), so the table is "seats
-- held now", and a finished booking has none (its audit records keep the history).
--
-- Seats are taken and returned only by the two procedures below, which the
-- store calls from every path that changes booked (reserve through
-- salon_reserve, the waitlist offer, the walk-in, a late payment, a move):
--
-- salon_take_seat(book, slot, rule, window) records the booking's row and takes
-- one seat of the slot by the one conditional UPDATE (a free seat, and the slot
-- as the rule wants it: booking.SeatRule, 1 open for booking, 2 open for a
-- walk-in, 3 not ended, 4 a free seat only); a seat not taken (the UPDATE
-- matched no row) deletes the row again and is SIGNALled as SQLSTATE 45000 'seat not taken', which the store maps to
-- SOLD_OUT or SLOT_NOT_BOOKABLE and salon_reserve handles itself. One round
-- trip from Go, as the bare UPDATE was.
--
-- salon_return_seats(book, slot) returns the seats the booking holds (of slot
-- only, or every one when slot is NULL): booked - 1 for each, and the rows deleted.
--
-- salon_reserve is 0013's, with the seat taken by salon_take_seat (rule 1),
-- still last and with the COMMIT at once.
--
-- The backfill gives every booking holding a seat its one row; the booked
-- counters are unchanged (they already equal those counts).

CREATE TABLE t_booking_slot (
  book_id BIGINT NOT NULL,
  slot_id BIGINT NOT NULL,
  PRIMARY KEY (book_id, slot_id),
  KEY idx_booking_slot_slot (slot_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO t_booking_slot (book_id, slot_id)
  SELECT book_id, slot_id FROM t_booking WHERE status IN (0, 1, 2, 5);

DROP PROCEDURE IF EXISTS salon_take_seat;

DELIMITER //
CREATE PROCEDURE salon_take_seat(
  IN p_book_id     BIGINT,
  IN p_slot_id     BIGINT,
  IN p_rule        TINYINT,
  IN p_window_days INT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  -- The row first, so the slot row (locked by the UPDATE) waits for nothing
  -- but the UPDATE and the caller's COMMIT; taken back when no seat was.
  INSERT INTO t_booking_slot (book_id, slot_id) VALUES (p_book_id, p_slot_id);
  UPDATE t_slot SET booked = booked + 1
    WHERE slot_id = p_slot_id AND booked < capacity AND CASE p_rule
      WHEN 1 THEN (is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY)
      WHEN 2 THEN (is_open = 1 AND end_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY)
      WHEN 3 THEN (end_at > UTC_TIMESTAMP(6))
      WHEN 4 THEN TRUE
      ELSE FALSE END;
  IF ROW_COUNT() <> 1 THEN
    DELETE FROM t_booking_slot WHERE book_id = p_book_id AND slot_id = p_slot_id;
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'seat not taken';
  END IF;
END //
DELIMITER ;

DROP PROCEDURE IF EXISTS salon_return_seats;

DELIMITER //
CREATE PROCEDURE salon_return_seats(
  IN p_book_id BIGINT,
  IN p_slot_id BIGINT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  UPDATE t_slot s JOIN t_booking_slot bs ON bs.slot_id = s.slot_id
    SET s.booked = s.booked - 1
    WHERE bs.book_id = p_book_id AND (p_slot_id IS NULL OR bs.slot_id = p_slot_id);
  DELETE FROM t_booking_slot WHERE book_id = p_book_id AND (p_slot_id IS NULL OR slot_id = p_slot_id);
END //
DELIMITER ;

DROP PROCEDURE IF EXISTS salon_reserve;

DELIMITER //
CREATE PROCEDURE salon_reserve(
  IN p_slot_id     BIGINT,
  IN p_window_days INT,
  IN p_openid      VARCHAR(64) CHARACTER SET utf8mb4,
  IN p_status      TINYINT,
  IN p_amount_fen  BIGINT,
  IN p_idem_key    VARCHAR(64) CHARACTER SET utf8mb4,
  IN p_lock_expire DATETIME(6),
  IN p_now         DATETIME(6),
  IN p_event       VARCHAR(32) CHARACTER SET utf8mb4,
  IN p_actor       VARCHAR(16) CHARACTER SET utf8mb4,
  IN p_reason      VARCHAR(255) CHARACTER SET utf8mb4,
  IN p_rule        TINYINT)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_book_id BIGINT DEFAULT NULL;
  DECLARE v_taken BOOLEAN DEFAULT TRUE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  INSERT INTO t_booking (slot_id, openid, status, amount_fen, idem_key, lock_expire, created_at, updated_at)
    VALUES (p_slot_id, p_openid, p_status, p_amount_fen, p_idem_key, p_lock_expire, p_now, p_now);
  SET v_book_id = LAST_INSERT_ID();
  UPDATE t_booking SET out_trade_no = CONCAT('BK', LPAD(v_book_id, GREATEST(12, LENGTH(v_book_id)), '0'))
    WHERE book_id = v_book_id;
  INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
    VALUES (v_book_id, p_slot_id, p_event, NULL, p_status, p_actor, p_reason, UTC_TIMESTAMP(6));
  BEGIN
    DECLARE CONTINUE HANDLER FOR SQLSTATE '45000' SET v_taken = FALSE;
    CALL salon_take_seat(v_book_id, p_slot_id, p_rule, p_window_days);
  END;
  IF v_taken THEN
    COMMIT;
  ELSE
    ROLLBACK;
    SET v_book_id = NULL;
  END IF;
  SELECT v_book_id, booked >= capacity FROM t_slot WHERE slot_id = p_slot_id;
END //
DELIMITER ;
