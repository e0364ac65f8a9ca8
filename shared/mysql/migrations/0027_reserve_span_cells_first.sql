-- salon_reserve_span takes the cells first. 0024 wrote the booking, its order
-- number, its audit record and its t_booking_slot rows before the cells'
-- conditional UPDATEs, as the seat's reservation does, so that the slot row is
-- locked only at the end. A technician's cells are not one hot row but a few
-- rows that several reservations race for, and a try that lost its cells had
-- written four to seven rows only to roll them back (and, waiting on the
-- cells, held the locks of those rows meanwhile). Now the cells are taken
-- first, in slot_id order, each by its conditional UPDATE; a try that comes
-- short has changed at most those counters and rolls them back, and only a
-- try that holds every cell writes the booking, its order number, its audit
-- record and its t_booking_slot rows before the COMMIT. Everything else is as
-- 0024 describes: the same parameters, answers, errors and lock order (the
-- cells in slot_id order, so overlapping spans queue rather than deadlock).
-- Runs on MySQL 8.0 and MariaDB 10.11 (only MariaDB has run it).

DROP PROCEDURE IF EXISTS salon_reserve_span;

DELIMITER //
CREATE PROCEDURE salon_reserve_span(
  IN p_tries       TEXT CHARACTER SET utf8mb4,
  IN p_start       DATETIME(6),
  IN p_first_end   DATETIME(6),
  IN p_rule        TINYINT,
  IN p_window_days INT,
  IN p_openid      VARCHAR(64) CHARACTER SET utf8mb4,
  IN p_status      TINYINT,
  IN p_amount_fen  BIGINT,
  IN p_idem_key    VARCHAR(64) CHARACTER SET utf8mb4,
  IN p_lock_expire DATETIME(6),
  IN p_service_id  BIGINT,
  IN p_price_fen   BIGINT,
  IN p_minutes     INT,
  IN p_event       VARCHAR(32) CHARACTER SET utf8mb4,
  IN p_actor       VARCHAR(16) CHARACTER SET utf8mb4,
  IN p_reason      VARCHAR(255) CHARACTER SET utf8mb4)
  MODIFIES SQL DATA
  SQL SECURITY INVOKER
BEGIN
  DECLARE v_tries INT DEFAULT JSON_LENGTH(p_tries);
  DECLARE v_try INT DEFAULT 0;
  DECLARE v_tech BIGINT;
  DECLARE v_first BIGINT;
  DECLARE v_cells INT;
  DECLARE v_i INT;
  DECLARE v_cell BIGINT;
  DECLARE v_taken INT;
  DECLARE v_open INT;
  DECLARE v_book_id BIGINT;
  DECLARE v_now DATETIME(6);
  DECLARE v_sold_out BOOLEAN DEFAULT FALSE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  WHILE v_try < v_tries DO
    SET v_tech = CAST(JSON_UNQUOTE(JSON_EXTRACT(p_tries, CONCAT('$[', v_try, '][0]'))) AS SIGNED);
    SET v_first = CAST(JSON_UNQUOTE(JSON_EXTRACT(p_tries, CONCAT('$[', v_try, '][1]'))) AS SIGNED);
    SET v_cells = JSON_LENGTH(p_tries, CONCAT('$[', v_try, '][2]'));
    START TRANSACTION;
    SET v_i = 0;
    SET v_taken = 0;
    WHILE v_i = v_taken AND v_i < v_cells DO
      SET v_cell = CAST(JSON_UNQUOTE(JSON_EXTRACT(p_tries, CONCAT('$[', v_try, '][2][', v_i, ']'))) AS SIGNED);
      UPDATE t_slot SET booked = booked + 1
        WHERE slot_id = v_cell AND technician_id = v_tech AND is_open = 1 AND booked < capacity AND CASE p_rule
          WHEN 1 THEN (p_start > UTC_TIMESTAMP(6) AND p_start <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY)
          WHEN 2 THEN (p_first_end > UTC_TIMESTAMP(6) AND p_start <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY)
          WHEN 3 THEN (p_first_end > UTC_TIMESTAMP(6))
          ELSE FALSE END;
      SET v_taken = v_taken + ROW_COUNT();
      SET v_i = v_i + 1;
    END WHILE;
    IF v_taken = v_cells AND v_cells > 0 THEN
      SET v_now = UTC_TIMESTAMP(6);
      INSERT INTO t_booking (slot_id, openid, status, amount_fen, idem_key, lock_expire, created_at, updated_at,
          service_id, technician_id, price_fen, minutes)
        VALUES (v_first, p_openid, p_status, p_amount_fen, p_idem_key, p_lock_expire, v_now, v_now,
          p_service_id, v_tech, p_price_fen, p_minutes);
      SET v_book_id = LAST_INSERT_ID();
      UPDATE t_booking SET out_trade_no = CONCAT('BK', LPAD(v_book_id, GREATEST(12, LENGTH(v_book_id)), '0'))
        WHERE book_id = v_book_id;
      INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
        VALUES (v_book_id, v_first, p_event, NULL, p_status, p_actor, p_reason, UTC_TIMESTAMP(6));
      SET v_i = 0;
      WHILE v_i < v_cells DO
        INSERT INTO t_booking_slot (book_id, slot_id)
          VALUES (v_book_id, CAST(JSON_UNQUOTE(JSON_EXTRACT(p_tries, CONCAT('$[', v_try, '][2][', v_i, ']'))) AS SIGNED));
        SET v_i = v_i + 1;
      END WHILE;
      COMMIT;
      SELECT v_book_id, v_tech, v_now;
      SET v_try = v_tries + 1;
    ELSE
      SET v_i = 0;
      SET v_open = 0;
      WHILE v_i < v_cells DO
        SET v_cell = CAST(JSON_UNQUOTE(JSON_EXTRACT(p_tries, CONCAT('$[', v_try, '][2][', v_i, ']'))) AS SIGNED);
        SELECT v_open + COUNT(*) INTO v_open FROM t_slot
          WHERE slot_id = v_cell AND technician_id = v_tech AND is_open = 1 AND CASE p_rule
            WHEN 1 THEN (p_start > UTC_TIMESTAMP(6) AND p_start <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY)
            WHEN 2 THEN (p_first_end > UTC_TIMESTAMP(6) AND p_start <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY)
            WHEN 3 THEN (p_first_end > UTC_TIMESTAMP(6))
            ELSE FALSE END
          FOR UPDATE;
        SET v_i = v_i + 1;
      END WHILE;
      IF v_open = v_cells AND v_cells > 0 THEN
        SET v_sold_out = TRUE;
      END IF;
      ROLLBACK;
      SET v_try = v_try + 1;
    END IF;
  END WHILE;
  IF v_try = v_tries THEN
    IF v_sold_out THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'span sold out';
    END IF;
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'span not bookable';
  END IF;
END //
DELIMITER ;
