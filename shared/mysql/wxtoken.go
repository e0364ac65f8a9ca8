package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// CachedToken returns the access token stored for appID and when it expires, or
// an empty token when none is stored. It lets every function instance use the
// one token WeChat issued instead of each fetching its own (wxmsg.TokenStore).
func (db *DB) CachedToken(ctx context.Context, appID string) (token string, expiresAt time.Time, err error) {
	defer wrap(&err, "CachedToken()")
	err = db.db.QueryRowContext(ctx,
		`SELECT access_token, expires_at FROM t_wx_token WHERE app_id = ?`, appID).Scan(&token, &expiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, fmt.Errorf("read access token: %w", err)
	}
	return token, expiresAt, nil
}

// SaveToken stores appID's access token, replacing the one stored. The last
// writer wins: WeChat's normal mode hands every instance the same token, and a
// token that is stale by the time it lands here is refused by WeChat (40001),
// which makes its next user refresh it once.
func (db *DB) SaveToken(ctx context.Context, appID, token string, expiresAt time.Time) (err error) {
	defer wrap(&err, "SaveToken()")
	if appID == "" || token == "" {
		return errors.New("save access token: empty app id or token")
	}
	_, err = db.db.ExecContext(ctx, `INSERT INTO t_wx_token (app_id, access_token, expires_at, updated_at)
		VALUES (?, ?, ?, UTC_TIMESTAMP(6))
		ON DUPLICATE KEY UPDATE access_token = ?, expires_at = ?, updated_at = UTC_TIMESTAMP(6)`,
		appID, token, expiresAt.UTC(), token, expiresAt.UTC())
	if err != nil {
		return fmt.Errorf("save access token: %w", err)
	}
	return nil
}
