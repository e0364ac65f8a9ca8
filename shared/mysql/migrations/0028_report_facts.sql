-- The owner's report is read from the facts of its range (shared/README.md,
-- "Reports"): every figure from the bookings and the ledger, in one read-only
-- snapshot, with nothing kept between reports. What it counts lives on the
-- booking row or in the ledger, written in the transaction of the change,
-- never only in the audit trail, which retention deletes.
--
-- t_booking.starts_at: the booking's start, the start_at of its slot (of a
-- service's first cell), written with the booking (salon_reserve,
-- salon_reserve_span, the walk-ins, a waitlist offer) and by every move, so a
-- booking counts on the shop day it starts without a join to t_slot. Slots
-- never change their start.
-- t_booking.late_cancel: 1 once the booking was cancelled late, set by the
-- status change that makes the late cancel (the customer's cancel after
-- cancelFreeUntil, paid or not). Until now a late cancel with nothing paid was
-- known only from its audit record (event late_cancel): once the release run
-- deleted that record, the report counted it no more.
-- idx_booking_start covers the report's reads of the bookings of a range: by
-- start, status and late cancel, and the completed ones by technician and
-- service with their minutes (InnoDB adds book_id, by which their ledger
-- rows are found). idx_money_day and idx_money_booking gain kind and
-- amount_fen, so the money of a range and of a booking is summed from the
-- index alone.
--
-- The backfill gives every booking its slot's start, and marks late every
-- cancelled booking whose audit trail has the event late_cancel (while the
-- record is there) or whose ledger has a kept row (collected first in a
-- table of this migration's own, dropped after): the figures of existing
-- data stay as they were. Then starts_at is made NOT NULL: a booking written
-- without its start is refused rather than missing from the report.
--
-- The report's kept days (0026's t_report_day, t_report_day_booking,
-- t_report_day_work) and t_audit.from_slot_id, which only their checks read,
-- are dropped.
--
-- salon_reserve and salon_reserve_span are 0019's and 0027's with the
-- booking's start written: salon_reserve reads its slot's start with a plain
-- (consistent, lockless) read before its transaction, so the slot row is
-- still locked only by the seat's UPDATE; salon_reserve_span writes its
-- p_start. Same parameters, answers and errors. Between each DROP and CREATE
-- a reservation fails (Error 1305), and from the MODIFY on the release before
-- this one can no longer write a booking from Go (a walk-in, a waitlist
-- offer: Error 1364, no start): migrate right before the release that writes
-- the new columns, as for 0007.
-- Runs on MySQL 8.0 and MariaDB 10.11 (only MariaDB has run it).

ALTER TABLE t_booking
  ADD COLUMN starts_at DATETIME NULL,
  ADD COLUMN late_cancel TINYINT NOT NULL DEFAULT 0;

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
  DECLARE v_start DATETIME DEFAULT NULL;
  DECLARE v_taken BOOLEAN DEFAULT TRUE;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  SELECT start_at INTO v_start FROM t_slot WHERE slot_id = p_slot_id;
  START TRANSACTION;
  INSERT INTO t_booking (slot_id, openid, status, amount_fen, idem_key, lock_expire, created_at, updated_at, starts_at)
    VALUES (p_slot_id, p_openid, p_status, p_amount_fen, p_idem_key, p_lock_expire, p_now, p_now, v_start);
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
          service_id, technician_id, price_fen, minutes, starts_at)
        VALUES (v_first, p_openid, p_status, p_amount_fen, p_idem_key, p_lock_expire, v_now, v_now,
          p_service_id, v_tech, p_price_fen, p_minutes, p_start);
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

UPDATE t_booking b JOIN t_slot s ON s.slot_id = b.slot_id SET b.starts_at = s.start_at;

CREATE TABLE t_late_0028 (book_id BIGINT NOT NULL PRIMARY KEY) ENGINE=InnoDB;

INSERT INTO t_late_0028 (book_id)
  SELECT book_id FROM t_money WHERE kind = 'kept'
  UNION
  SELECT book_id FROM t_audit WHERE event = 'late_cancel' AND book_id IS NOT NULL;

UPDATE t_booking b JOIN t_late_0028 l ON l.book_id = b.book_id SET b.late_cancel = 1 WHERE b.status = 3;

DROP TABLE t_late_0028;

ALTER TABLE t_booking
  MODIFY COLUMN starts_at DATETIME NOT NULL,
  ADD INDEX idx_booking_start (starts_at, status, late_cancel, technician_id, service_id, minutes);

ALTER TABLE t_money
  DROP INDEX idx_money_day,
  ADD INDEX idx_money_day (created_at, kind, amount_fen),
  DROP INDEX idx_money_booking,
  ADD INDEX idx_money_booking (book_id, kind, amount_fen),
  ALGORITHM=INPLACE, LOCK=NONE;

DROP TABLE IF EXISTS t_report_day_work, t_report_day_booking, t_report_day;

ALTER TABLE t_audit DROP COLUMN from_slot_id;
