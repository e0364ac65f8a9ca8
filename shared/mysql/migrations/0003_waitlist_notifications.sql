-- The waitlist and the outbox of customer notifications. New tables only; nothing
-- existing changes.

-- A customer waiting for a seat of a full slot. The first in line is the lowest
-- waitlist_id; one entry per customer and slot.
CREATE TABLE t_waitlist (
  waitlist_id BIGINT      NOT NULL AUTO_INCREMENT,
  slot_id     BIGINT      NOT NULL,
  openid      VARCHAR(64) NOT NULL,
  created_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (waitlist_id),
  UNIQUE KEY uk_waitlist_slot_openid (slot_id, openid),
  KEY idx_waitlist_openid (openid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The outbox: a notification is written in the same transaction as the change
-- that causes it and sent afterwards, by the function at once where it has time,
-- else by the release run. One per booking and kind, so a reminder is written
-- once however many release runs overlap.
CREATE TABLE t_notification (
  notification_id BIGINT       NOT NULL AUTO_INCREMENT,
  book_id         BIGINT       NOT NULL,
  kind            VARCHAR(16)  NOT NULL,
  openid          VARCHAR(64)  NOT NULL,
  status          VARCHAR(16)  NOT NULL,
  attempts        INT          NOT NULL DEFAULT 0,
  next_at         DATETIME(6)  NOT NULL,
  last_error      VARCHAR(255) NOT NULL DEFAULT '',
  created_at      DATETIME(6)  NOT NULL,
  sent_at         DATETIME(6)  NULL,
  PRIMARY KEY (notification_id),
  UNIQUE KEY uk_notification_booking_kind (book_id, kind),
  KEY idx_notification_due (status, next_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
