-- After the appointment and refunds that settle themselves. Adds columns with
-- defaults and indexes only, so a database holding v1 data keeps every row as it
-- was; in-flight refunds get a due time (their last change), so the first release
-- run after the upgrade takes them up.
--
-- Status 5 (no_show) needs no schema change: status is a TINYINT, a no-show holds
-- its seat like 0, 1 and 2, and is finished (active_openid stays NULL for it).

-- refund_requested_at: when WeChat accepted the refund request (it became
-- processing); a refund still processing REFUND_QUERY_AFTER later is queried.
-- refund_attempts / refund_next_at: failed requests and queries are retried with
-- backoff, in order of when they are next due, never by id.
ALTER TABLE t_booking
  ADD COLUMN refund_requested_at DATETIME(6) NULL AFTER refunded_at,
  ADD COLUMN refund_attempts INT NOT NULL DEFAULT 0 AFTER refund_requested_at,
  ADD COLUMN refund_next_at DATETIME(6) NULL AFTER refund_attempts;

UPDATE t_booking SET refund_next_at = updated_at WHERE refund_status IN ('pending', 'processing');

UPDATE t_booking SET refund_requested_at = updated_at WHERE refund_status = 'processing';

CREATE INDEX idx_booking_refund_due ON t_booking (refund_status, refund_next_at);

DROP INDEX idx_booking_refund ON t_booking;

-- A customer's no-shows, for NO_SHOW_LIMIT.
CREATE INDEX idx_booking_openid_status ON t_booking (openid, status);
