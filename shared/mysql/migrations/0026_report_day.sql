-- The owner's report keeps the sums of each shop day that has ended, so that
-- a report of a year reads a year of days, not a year of bookings. A kept day
-- is read again from the bookings and the ledger when a change to it leaves a
-- trace after its check (package booking, reportkeep.go): an audit record of
-- one of its bookings, a ledger row of one of its bookings or written that
-- day. A move's audit record names the slot it left (from_slot_id), so the
-- day a booking moved away from is read again too.
--
-- t_report_day: one row per day kept, by the instants of its shop day (a
-- change of SHOP_TZ gives other instants, and the day is read afresh); its
-- money by kind; checked_at is the database's time its sums were last found
-- current. t_report_day_booking: its bookings by status and late cancel.
-- t_report_day_work: its completed bookings by technician and service (0 for
-- none), with their minutes and takings.
-- Runs on MySQL 8.0 and MariaDB 10.11 (only MariaDB has run it; ADD COLUMN at
-- the end of t_audit is instant on both).

ALTER TABLE t_audit ADD COLUMN from_slot_id BIGINT NULL;

CREATE TABLE t_report_day (
  day_start    DATETIME(6) NOT NULL,
  day_end      DATETIME(6) NOT NULL,
  online_fen   BIGINT      NOT NULL,
  shop_fen     BIGINT      NOT NULL,
  refunded_fen BIGINT      NOT NULL,
  kept_fen     BIGINT      NOT NULL,
  checked_at   DATETIME(6) NOT NULL,
  PRIMARY KEY (day_start)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_report_day_booking (
  day_start DATETIME(6) NOT NULL,
  status    TINYINT     NOT NULL,
  late      TINYINT     NOT NULL,
  n         INT         NOT NULL,
  PRIMARY KEY (day_start, status, late)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_report_day_work (
  day_start     DATETIME(6) NOT NULL,
  technician_id BIGINT      NOT NULL,
  service_id    BIGINT      NOT NULL,
  completed     INT         NOT NULL,
  minutes       INT         NOT NULL,
  takings_fen   BIGINT      NOT NULL,
  PRIMARY KEY (day_start, technician_id, service_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
