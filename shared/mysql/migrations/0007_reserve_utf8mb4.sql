-- salon_reserve again, unchanged but for the character set of its string
-- parameters (0005 is the procedure's full description). A routine's VARCHAR
-- parameter without CHARACTER SET takes the database's default character set,
-- not the table's or the connection's: on a schema created latin1 or utf8mb3
-- (an older TencentDB instance, a database made by hand) an Idempotency-Key
-- such as '预约-键😀', or an openid outside that set, failed the CALL with
-- Error 1366 before any row was touched. Now they are utf8mb4, like the
-- columns they are written to, whatever the schema's default. The procedure
-- has no string locals. TestReserveOnANonUTF8MB4Schema proves it on latin1 and
-- utf8mb3 schemas, and checks that every string parameter is utf8mb4.
--
-- DROP and CREATE need ALTER ROUTINE and CREATE ROUTINE, as 0005 did.

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
  IN p_reason      VARCHAR(255) CHARACTER SET utf8mb4)
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
