-- The console's 查预约 finds a customer's bookings by her phone (in full or its
-- last four digits) and by the start of her name, not only by a booking
-- number. The full phone already has uk_customer_phone (0015); the last four digits
-- are a generated column (phone_tail, VIRTUAL: computed from phone, stored only
-- in its index) with an index of their own, and the name gets one, so each of
-- the three is a range of one index (LIKE '王%' on name is a range; a LIKE
-- '%1234' on phone would read the whole table).
--
-- Built online, in two statements (MariaDB adds a virtual column in place only
-- alone): the virtual column is added without copying the table, and its
-- index and the name's are in-place secondary indexes that allow concurrent
-- reads and writes on MySQL 8.0 and MariaDB 10.11 (ALGORITHM=INPLACE,
-- LOCK=NONE; a server that cannot do so refuses the statement rather than
-- locking the table).
ALTER TABLE t_customer
  ADD COLUMN phone_tail CHAR(4) AS (RIGHT(phone, 4)) VIRTUAL,
  ALGORITHM=INPLACE, LOCK=NONE;

ALTER TABLE t_customer
  ADD INDEX idx_customer_phone_tail (phone_tail),
  ADD INDEX idx_customer_name (name),
  ALGORITHM=INPLACE, LOCK=NONE;
