-- One phone is one customer, by a unique key on t_customer.phone; who gave the
-- name, so that the name the salon types never replaces the customer's own.
--
-- Until now the walk-in looked for the phone first and inserted when it found
-- none: walk-ins with one new phone at the same moment each made a customer,
-- and the one person then held several unfinished bookings (one per row). The
-- duplicates are merged here, before the key is added, onto one row per phone,
-- the keeper: the mini-program customer with the phone if there is one (the
-- earliest), else the earliest walk-in, which is the row a walk-in with that
-- phone booked as until now.
-- - A walk-in duplicate (no openid) gives the keeper her bookings (named by the
--   keeper's openid too, as every salon booking for a mini-program customer),
--   her note (joined below the keeper's, each different note once) and her name
--   if the keeper has none; then her row is deleted.
-- - No booking is cancelled by a migration: an unfinished booking is moved only
--   while the keeper holds none (at most one per keeper). A duplicate left
--   holding one keeps her row and that booking, without the phone (which is the
--   keeper's now); her note is the keeper's too.
-- - Another mini-program customer with the phone keeps her bookings and her
--   note and loses the phone; two openids are never one row.
-- NULL (no phone) stays allowed any number of times (a unique key ignores
-- NULLs); '' is made NULL first, as the store writes no phone.
--
-- name_by_customer: 1 when the customer gave the name herself (PUT /me), 0 when
-- the salon typed it (a walk-in). A mini-program customer's name from before is
-- taken as her own: the salon only ever filled in a name she had not given.
--
-- note widens to 1000 characters: the salon types at most 200, but merging two
-- customers keeps both notes, joined.
--
-- The helper tables are plain tables (a TEMPORARY table cannot be named twice
-- in one statement on MySQL 8.0), dropped at the end. Runs on MySQL 8.0 and
-- MariaDB 10.11.

UPDATE t_customer SET phone = NULL WHERE phone = '';

ALTER TABLE t_customer
  ADD COLUMN name_by_customer TINYINT NOT NULL DEFAULT 0,
  MODIFY note VARCHAR(1000) NULL;

UPDATE t_customer SET name_by_customer = 1 WHERE openid IS NOT NULL AND name IS NOT NULL;

DROP TABLE IF EXISTS t_merge_0015;
CREATE TABLE t_merge_0015 (
  dup_id        BIGINT      NOT NULL,
  keeper_id     BIGINT      NOT NULL,
  keeper_openid VARCHAR(64) NULL,
  dup_openid    VARCHAR(64) NULL,
  PRIMARY KEY (dup_id),
  KEY (keeper_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO t_merge_0015 (dup_id, keeper_id, keeper_openid, dup_openid)
SELECT c.customer_id, k.keeper_id, kc.openid, c.openid
FROM t_customer c
JOIN (SELECT phone, COALESCE(MIN(CASE WHEN openid IS NOT NULL THEN customer_id END), MIN(customer_id)) AS keeper_id
      FROM t_customer WHERE phone IS NOT NULL GROUP BY phone HAVING COUNT(*) > 1) k ON k.phone = c.phone
JOIN t_customer kc ON kc.customer_id = k.keeper_id
WHERE c.customer_id <> k.keeper_id;

-- Finished bookings hold no unique key: all of them move.
UPDATE t_booking b JOIN t_merge_0015 m ON b.customer_id = m.dup_id
SET b.customer_id = m.keeper_id, b.openid = COALESCE(b.openid, m.keeper_openid)
WHERE m.dup_openid IS NULL AND b.status NOT IN (0, 1);

-- Unfinished ones: the earliest, when the keeper holds none.
DROP TABLE IF EXISTS t_merge_move_0015;
CREATE TABLE t_merge_move_0015 (
  book_id       BIGINT      NOT NULL,
  keeper_id     BIGINT      NOT NULL,
  keeper_openid VARCHAR(64) NULL,
  PRIMARY KEY (book_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO t_merge_move_0015 (book_id, keeper_id, keeper_openid)
SELECT MIN(b.book_id), m.keeper_id, m.keeper_openid
FROM t_booking b JOIN t_merge_0015 m ON b.customer_id = m.dup_id
WHERE m.dup_openid IS NULL AND b.status IN (0, 1)
  AND NOT EXISTS (SELECT 1 FROM t_booking k WHERE k.status IN (0, 1) AND k.customer_id = m.keeper_id)
  AND NOT EXISTS (SELECT 1 FROM t_booking k WHERE k.status IN (0, 1) AND k.openid = m.keeper_openid)
GROUP BY m.keeper_id, m.keeper_openid;

UPDATE t_booking b JOIN t_merge_move_0015 t ON b.book_id = t.book_id
SET b.customer_id = t.keeper_id, b.openid = COALESCE(b.openid, t.keeper_openid);

-- The walk-in duplicates' notes (each different one once, in the order of the
-- rows, below the keeper's) and the earliest one's name, for a keeper without
-- a name.
DROP TABLE IF EXISTS t_merge_notes_0015;
CREATE TABLE t_merge_notes_0015 (
  keeper_id BIGINT        NOT NULL,
  first_id  BIGINT        NOT NULL,
  note      VARCHAR(1000) NOT NULL,
  PRIMARY KEY (keeper_id, first_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO t_merge_notes_0015 (keeper_id, first_id, note)
SELECT m.keeper_id, MIN(d.customer_id), d.note
FROM t_merge_0015 m
JOIN t_customer d ON d.customer_id = m.dup_id
JOIN t_customer kc ON kc.customer_id = m.keeper_id
WHERE m.dup_openid IS NULL AND d.note IS NOT NULL AND d.note <> COALESCE(kc.note, '')
GROUP BY m.keeper_id, d.note;

DROP TABLE IF EXISTS t_merge_names_0015;
CREATE TABLE t_merge_names_0015 (
  keeper_id BIGINT      NOT NULL,
  name      VARCHAR(20) NOT NULL,
  PRIMARY KEY (keeper_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO t_merge_names_0015 (keeper_id, name)
SELECT m.keeper_id, d.name
FROM t_merge_0015 m JOIN t_customer d ON d.customer_id = m.dup_id
WHERE m.dup_openid IS NULL AND d.name IS NOT NULL
  AND d.customer_id = (SELECT MIN(m2.dup_id) FROM t_merge_0015 m2 JOIN t_customer d2 ON d2.customer_id = m2.dup_id
                       WHERE m2.keeper_id = m.keeper_id AND m2.dup_openid IS NULL AND d2.name IS NOT NULL);

SET SESSION group_concat_max_len = 1048576;

UPDATE t_customer c
JOIN (SELECT keeper_id, GROUP_CONCAT(note ORDER BY first_id SEPARATOR '\n') AS notes
      FROM t_merge_notes_0015 GROUP BY keeper_id) n ON n.keeper_id = c.customer_id
SET c.note = LEFT(CASE WHEN c.note IS NULL THEN n.notes ELSE CONCAT(c.note, '\n', n.notes) END, 1000),
    c.updated_at = UTC_TIMESTAMP(6);

UPDATE t_customer c JOIN t_merge_names_0015 n ON n.keeper_id = c.customer_id
SET c.name = n.name, c.updated_at = UTC_TIMESTAMP(6)
WHERE c.name IS NULL;

-- The phone is the keeper's alone; a walk-in duplicate with nothing left is gone.
UPDATE t_customer c JOIN t_merge_0015 m ON m.dup_id = c.customer_id
SET c.phone = NULL, c.updated_at = UTC_TIMESTAMP(6);

DELETE c FROM t_customer c JOIN t_merge_0015 m ON m.dup_id = c.customer_id
WHERE m.dup_openid IS NULL AND NOT EXISTS (SELECT 1 FROM t_booking b WHERE b.customer_id = c.customer_id);

DROP TABLE t_merge_names_0015;
DROP TABLE t_merge_notes_0015;
DROP TABLE t_merge_move_0015;
DROP TABLE t_merge_0015;

ALTER TABLE t_customer
  DROP INDEX idx_customer_phone,
  ADD UNIQUE KEY uk_customer_phone (phone);
