-- WeChat's access token (stable_token), shared by every function instance: one row
-- per mini-program. WeChat asks for at least 512 characters of room for a token.
CREATE TABLE IF NOT EXISTS t_wx_token (
  app_id VARCHAR(64) NOT NULL PRIMARY KEY,
  access_token VARCHAR(1024) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
