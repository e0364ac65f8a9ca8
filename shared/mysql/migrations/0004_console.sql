-- The salon console (issue 14): what its health page and its sign-out need.

-- One row per release run, written by the run itself as it ends, so the console
-- can show when the timer last ran and what it did. The summary is the run's
-- answer as JSON: counts added to the release run later need no migration. The
-- run prunes rows older than two days; a salon needs the latest, not a history.
CREATE TABLE t_release_run (
  run_id      BIGINT       NOT NULL AUTO_INCREMENT,
  started_at  DATETIME(6)  NOT NULL,
  finished_at DATETIME(6)  NOT NULL,
  summary     TEXT         NOT NULL,
  error       VARCHAR(255) NOT NULL DEFAULT '',
  PRIMARY KEY (run_id),
  KEY idx_release_run_finished (finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Console sessions that were signed out before they expired. A session cookie is
-- signed, not stored, so without this list a copied cookie would stay good for
-- its twelve hours after the owner pressed sign-out. Rows past their expiry are
-- pruned at each sign-out.
CREATE TABLE t_console_signout (
  session_id VARCHAR(64) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  PRIMARY KEY (session_id),
  KEY idx_console_signout_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The console's audit trail is read by day, newest first.
CREATE INDEX idx_audit_created ON t_audit (created_at);
