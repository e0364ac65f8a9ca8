-- Reconciliation against WeChat Pay's daily trade bill: one row per bill date
-- (WeChat's day, UTC+8) with what the last attempt found, and the differences
-- it found, replaced whole by each attempt.
--
-- status:
--   matched      every bill line has its ledger row and every ledger row its
--                line, amounts equal; never fetched again by the release run
--   differences  something does not pair up (t_bill_difference); tried again
--                by later runs until it matches or three days have passed
--   failed       the bill could not be had (WeChat down, a bad hash, a file
--                that does not parse); tried again like differences
-- attempted_at is the database's time of the last attempt; attempts counts them.
-- Runs on MySQL 8.0 and MariaDB 10.11 (only MariaDB has run it).

CREATE TABLE t_bill_day (
  bill_date    DATE         NOT NULL,
  status       VARCHAR(12)  NOT NULL,
  bill_rows    INT          NOT NULL DEFAULT 0,
  matched      INT          NOT NULL DEFAULT 0,
  fees_fen     BIGINT       NOT NULL DEFAULT 0,
  error        VARCHAR(255) NULL,
  attempts     INT          NOT NULL DEFAULT 1,
  attempted_at DATETIME(6)  NOT NULL,
  PRIMARY KEY (bill_date),
  CONSTRAINT chk_bill_day_status CHECK (status IN ('matched', 'differences', 'failed'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- kind: missing_here (a bill line without a ledger row; ours_fen NULL),
-- missing_in_bill (a ledger row without a line; theirs_fen NULL), amount (both,
-- different). out_refund_no is set for a refund, NULL for a payment.
CREATE TABLE t_bill_difference (
  bill_date     DATE        NOT NULL,
  seq           INT         NOT NULL,
  kind          VARCHAR(16) NOT NULL,
  out_trade_no  VARCHAR(32) NOT NULL,
  out_refund_no VARCHAR(64) NULL,
  ours_fen      BIGINT      NULL,
  theirs_fen    BIGINT      NULL,
  PRIMARY KEY (bill_date, seq),
  CONSTRAINT fk_bill_difference_day FOREIGN KEY (bill_date) REFERENCES t_bill_day (bill_date) ON DELETE CASCADE,
  CONSTRAINT chk_bill_difference_kind CHECK (kind IN ('missing_here', 'missing_in_bill', 'amount'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
