-- The salon's schema. Times are UTC (DATETIME without zone); the shop's zone is
-- applied at the edges. Runs on MySQL 8.0 and MariaDB 10.11.

CREATE TABLE t_slot (
  slot_id    BIGINT     NOT NULL AUTO_INCREMENT,
  start_at   DATETIME   NOT NULL,
  end_at     DATETIME   NOT NULL,
  capacity   INT        NOT NULL,
  booked     INT        NOT NULL DEFAULT 0,
  price_fen  BIGINT     NOT NULL,
  is_open    TINYINT(1) NOT NULL DEFAULT 1,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (slot_id),
  UNIQUE KEY uk_slot_start (start_at),
  -- The last line of defence against overselling: even a bug in the code cannot
  -- commit a slot with more bookings than seats.
  CONSTRAINT chk_slot_booked CHECK (booked >= 0 AND booked <= capacity),
  CONSTRAINT chk_slot_price CHECK (price_fen >= 0),
  CONSTRAINT chk_slot_times CHECK (end_at > start_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_booking (
  book_id        BIGINT      NOT NULL AUTO_INCREMENT,
  slot_id        BIGINT      NOT NULL,
  openid         VARCHAR(64) NOT NULL,
  status         TINYINT     NOT NULL,
  amount_fen     BIGINT      NOT NULL,
  out_trade_no   VARCHAR(32) NULL,
  idem_key       VARCHAR(64) NULL,
  lock_expire    DATETIME(6) NOT NULL,
  -- A release run leases the rows it works on until claim_until, so that two
  -- overlapping timer runs never handle the same booking.
  claim_until    DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00',
  transaction_id VARCHAR(64) NULL,
  paid_fen       BIGINT      NULL,
  paid_at        DATETIME(6) NULL,
  refund_status  VARCHAR(16) NULL,
  refund_fen     BIGINT      NULL,
  refund_no      VARCHAR(32) NULL,
  refund_id      VARCHAR(64) NULL,
  refunded_at    DATETIME(6) NULL,
  created_at     DATETIME(6) NOT NULL,
  updated_at     DATETIME(6) NOT NULL,
  -- The customer's openid while the booking is unfinished (pending or confirmed),
  -- NULL otherwise. Its unique key is what makes "one unfinished booking per
  -- customer" hold under concurrency; finished bookings (NULL) never collide, so a
  -- customer can cancel and book the same slot as often as they like.
  active_openid  VARCHAR(64) AS (IF(status IN (0, 1), openid, NULL)) STORED,
  PRIMARY KEY (book_id),
  UNIQUE KEY uk_booking_active (active_openid),
  UNIQUE KEY uk_booking_idem (openid, idem_key),
  UNIQUE KEY uk_booking_trade (out_trade_no),
  KEY idx_booking_expire (status, lock_expire),
  KEY idx_booking_openid (openid, book_id),
  KEY idx_booking_slot (slot_id, status),
  KEY idx_booking_refund (refund_status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_audit (
  audit_id    BIGINT       NOT NULL AUTO_INCREMENT,
  book_id     BIGINT       NULL,
  slot_id     BIGINT       NULL,
  event       VARCHAR(32)  NOT NULL,
  from_status TINYINT      NULL,
  to_status   TINYINT      NULL,
  actor       VARCHAR(16)  NOT NULL,
  reason      VARCHAR(255) NOT NULL DEFAULT '',
  created_at  DATETIME(6)  NOT NULL,
  shipped_at  DATETIME(6)  NULL,
  PRIMARY KEY (audit_id),
  KEY idx_audit_unshipped (shipped_at, audit_id),
  KEY idx_audit_book (book_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
