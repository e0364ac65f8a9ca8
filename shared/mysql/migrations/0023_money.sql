-- The money ledger: every movement of money, one row each, append-only.
--
-- kind:
--   deposit  a payment WeChat Pay confirmed (method wechatpay), also one that
--            is refunded at once because it found no seat (a refund row follows)
--   balance  what the customer paid in the shop at checkout (method wechat,
--            alipay, cash or card), once per booking
--   refund   a refund WeChat Pay says succeeded (method wechatpay)
--   kept     a deposit the salon keeps: a late cancel's forfeit or a no-show.
--            Not a movement of money but the moment it became the salon's; a
--            no-show checked in late (5 -> 2) writes the same amount negated,
--            so the sum of a booking's kept rows is what is kept now.
-- Each row is written in the transaction of the change it belongs to (the
-- payment's confirmation, the refund's success, the checkout, the status
-- change) with the database's time; no statement of the store updates or
-- deletes a row. once_book_id makes deposit, balance and refund at most one
-- per booking (kept rows come and go in pairs, so they are not keyed).
-- Runs on MySQL 8.0 and MariaDB 10.11 (only MariaDB has run it).

CREATE TABLE t_money (
  money_id       BIGINT      NOT NULL AUTO_INCREMENT,
  book_id        BIGINT      NOT NULL,
  kind           VARCHAR(8)  NOT NULL,
  amount_fen     BIGINT      NOT NULL,
  method         VARCHAR(16) NOT NULL,
  out_trade_no   VARCHAR(32) NULL,
  transaction_id VARCHAR(64) NULL,
  out_refund_no  VARCHAR(64) NULL,
  refund_id      VARCHAR(64) NULL,
  actor          VARCHAR(16) NOT NULL,
  created_at     DATETIME(6) NOT NULL,
  once_book_id   BIGINT AS (IF(kind = 'kept', NULL, book_id)) STORED,
  PRIMARY KEY (money_id),
  UNIQUE KEY uk_money_once (once_book_id, kind),
  KEY idx_money_day (created_at),
  KEY idx_money_booking (book_id),
  KEY idx_money_trade (out_trade_no),
  KEY idx_money_refund (out_refund_no),
  CONSTRAINT chk_money_kind CHECK (kind IN ('deposit', 'balance', 'refund', 'kept')),
  CONSTRAINT chk_money_method CHECK (method IN ('wechatpay', 'wechat', 'alipay', 'cash', 'card')),
  CONSTRAINT chk_money_amount CHECK (kind = 'kept' OR (amount_fen >= 0 AND amount_fen <= 1000000))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- What the bookings already record moves into the ledger: each payment WeChat
-- confirmed at its payment time, each refund that succeeded at its success
-- time, and each deposit kept (a paid late cancel with no refund, a paid
-- no-show) at the time of that change in the audit trail.
INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, transaction_id, actor, created_at)
  SELECT book_id, 'deposit', COALESCE(paid_fen, amount_fen), 'wechatpay', out_trade_no, transaction_id, 'wechatpay',
         COALESCE(paid_at, updated_at)
  FROM t_booking WHERE transaction_id IS NOT NULL;

INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, out_refund_no, refund_id, actor, created_at)
  SELECT book_id, 'refund', COALESCE(refund_fen, paid_fen, amount_fen), 'wechatpay', out_trade_no, refund_no, refund_id, 'wechatpay',
         COALESCE(refunded_at, updated_at)
  FROM t_booking WHERE transaction_id IS NOT NULL AND refund_status = 'succeeded';

INSERT INTO t_money (book_id, kind, amount_fen, method, out_trade_no, actor, created_at)
  SELECT b.book_id, 'kept', COALESCE(b.paid_fen, b.amount_fen), 'wechatpay', b.out_trade_no, 'system',
         COALESCE((SELECT MAX(a.created_at) FROM t_audit a WHERE a.book_id = b.book_id AND a.to_status = b.status), b.updated_at)
  FROM t_booking b
  WHERE b.transaction_id IS NOT NULL AND b.refund_status IS NULL AND b.status IN (3, 5);
