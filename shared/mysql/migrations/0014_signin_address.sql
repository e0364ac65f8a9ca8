-- The sign-in lock-out per name and client address (0011 counted per name
-- only, so anybody could lock any name, the built-in owner's too): a failed
-- sign-in records the address it came from (the gateway's source address, an
-- IPv6 one as its /64), five of one name from one address within 15 minutes
-- lock the name for that address and twenty from all addresses lock it for
-- everyone. Both kinds of row carry their time so that the release run
-- deletes those older than a day (through idx_signin_failure_at and
-- idx_signin_name_last): a stranger trying random names leaves at most one
-- failure and one name row per try, for a day. Rows from before this
-- migration get the address '' and a name row time of 1970, so the first run
-- deletes the latter. Runs on MySQL 8.0 and MariaDB 10.11.
ALTER TABLE t_signin_failure
  ADD COLUMN address VARCHAR(45) NOT NULL DEFAULT '' AFTER name,
  ADD KEY idx_signin_failure_address (name, address, failed_at),
  ADD KEY idx_signin_failure_at (failed_at);

ALTER TABLE t_signin_name
  ADD COLUMN last_at DATETIME(6) NOT NULL DEFAULT '1970-01-01 00:00:00',
  ADD KEY idx_signin_name_last (last_at);
