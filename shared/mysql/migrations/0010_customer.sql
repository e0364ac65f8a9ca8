-- Customers have a name: one row per customer, with the name she gives, the
-- phone number WeChat vouches for (or the salon took down) and the salon's note.
-- A mini-program customer's row is the one of her openid, created the first time
-- it is needed (GET or PUT /me, the salon's list of bookings); a walk-in or a
-- phone booking has none (openid NULL). Runs on MySQL 8.0 and MariaDB 10.11.
CREATE TABLE t_customer (
  customer_id BIGINT       NOT NULL AUTO_INCREMENT,
  openid      VARCHAR(64)  NULL,
  name        VARCHAR(20)  NULL,
  phone       VARCHAR(20)  NULL,
  note        VARCHAR(200) NULL,
  created_at  DATETIME(6)  NOT NULL,
  updated_at  DATETIME(6)  NOT NULL,
  PRIMARY KEY (customer_id),
  UNIQUE KEY uk_customer_openid (openid),
  KEY idx_customer_phone (phone)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- A booking the salon makes for a walk-in or a caller has no openid, only its
-- customer. Mini-program bookings keep naming their customer by openid
-- (customer_id NULL; the customer is the row of that openid); a salon's booking
-- for a known mini-program customer names both. active_customer is the
-- customer while the booking is unfinished (pending or confirmed, the same list
-- as active_openid): its unique key holds "one unfinished booking per customer"
-- for customers without an openid too, under concurrency.
ALTER TABLE t_booking
  MODIFY openid VARCHAR(64) NULL,
  ADD COLUMN customer_id BIGINT NULL,
  ADD COLUMN active_customer BIGINT AS (IF(status IN (0, 1), customer_id, NULL)) STORED,
  ADD UNIQUE KEY uk_booking_customer_active (active_customer),
  ADD KEY idx_booking_customer (customer_id, book_id);
