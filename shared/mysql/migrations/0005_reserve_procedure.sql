-- The reservation's write as one server-side call: take the seat, write the
-- booking, its order number and its audit record only if a seat was taken, and
-- commit, all inside the server (shared/mysql/booking.go, Reserve). The slot
-- row's lock is released by the COMMIT the server runs right after the seat-taking
-- UPDATE, never held while a network round trip passes, on every path: the exit
-- handler rolls back on the server before the error reaches the client.
--
-- Plain MySQL 8.0 / MariaDB 10.11 (no compound statement outside a routine).
-- SQL SECURITY INVOKER: it runs with the caller's privileges on the tables, so
-- the product's account needs EXECUTE as well (and CREATE ROUTINE to migrate).
--
-- The seat is taken only while the slot is bookable: the condition is the
-- store's bookableExpr with its parameter named p_window_days, and
-- vocabulary_test.go checks that the two read the same. A later change to the
-- condition or to the writes is a new migration that drops and creates it again.

DROP PROCEDURE IF EXISTS salon_reserve;

DELIMITER //
CREATE PROCEDURE salon_reserve(
  IN p_slot_id     BIGINT,
  IN p_window_days INT,
  IN p_openid      VARCHAR(64),
  IN p_status      TINYINT,
  IN p_amount_fen  BIGINT,
  IN p_idem_key    VARCHAR(64),
  IN p_lock_expire DATETIME(6),
  IN p_now         DATETIME(6),
  IN p_event       VARCHAR(32),
  IN p_actor       VARCHAR(16),
  IN p_reason      VARCHAR(255))
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_book_id BIGINT DEFAULT NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  UPDATE t_slot SET booked = booked + 1
    WHERE slot_id = p_slot_id AND ((is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY) AND booked < capacity);
  IF ROW_COUNT() = 1 THEN
    INSERT INTO t_booking (slot_id, openid, status, amount_fen, idem_key, lock_expire, created_at, updated_at)
      VALUES (p_slot_id, p_openid, p_status, p_amount_fen, p_idem_key, p_lock_expire, p_now, p_now);
    SET v_book_id = LAST_INSERT_ID();
    UPDATE t_booking SET out_trade_no = CONCAT('BK', LPAD(v_book_id, GREATEST(12, LENGTH(v_book_id)), '0'))
      WHERE book_id = v_book_id;
    INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
      VALUES (v_book_id, p_slot_id, p_event, NULL, p_status, p_actor, p_reason, UTC_TIMESTAMP(6));
  END IF;
  COMMIT;
  SELECT v_book_id, booked >= capacity FROM t_slot WHERE slot_id = p_slot_id;
END //
DELIMITER ;
