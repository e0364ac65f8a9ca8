-- Staff accounts: people sign in to the console as themselves. The built-in
-- owner (name admin, ADMIN_TOKEN as the password) has no row. A password is
-- kept only as a bcrypt hash. Runs on MySQL 8.0 and MariaDB 10.11.
CREATE TABLE t_staff (
  staff_id            BIGINT       NOT NULL AUTO_INCREMENT,
  name                VARCHAR(40)  NOT NULL,
  role                VARCHAR(8)   NOT NULL,
  password_hash       VARCHAR(100) NOT NULL,
  disabled            TINYINT(1)   NOT NULL DEFAULT 0,
  password_changed_at DATETIME(6)  NOT NULL,
  created_at          DATETIME(6)  NOT NULL,
  updated_at          DATETIME(6)  NOT NULL,
  PRIMARY KEY (staff_id),
  UNIQUE KEY uk_staff_name (name),
  CONSTRAINT ck_staff_role CHECK (role IN ('owner', 'staff'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The failed sign-ins of the last minutes, per name (known or not), shared by
-- every instance: five within 15 minutes lock the name for 15 minutes. Old rows
-- are deleted as sign-ins of the name go by.
CREATE TABLE t_signin_failure (
  failure_id BIGINT      NOT NULL AUTO_INCREMENT,
  name       VARCHAR(40) NOT NULL,
  failed_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (failure_id),
  KEY idx_signin_failure_name (name, failed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- One row per name ever tried: a sign-in's outcome is recorded with this row
-- locked (SELECT ... FOR UPDATE), so the sign-ins of one name are counted one
-- after another on every instance and never more than five failures count
-- before the lock; other names never wait for it.
CREATE TABLE t_signin_name (
  name VARCHAR(40) NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
