package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"

	drv "github.com/go-sql-driver/mysql"
)

// dbNameRE is what CreateDatabase accepts as a schema name: it is written into
// the statement (a name cannot be a parameter), so only plain identifiers pass.
var dbNameRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// CreateDatabase makes sure the database named by dsn exists, creating it
// (utf8mb4) when the server says it is unknown, and reports whether it did. The
// database is tried first, so a user that may use an existing database but not
// create one (a TencentDB account scoped to one schema) passes.
func CreateDatabase(ctx context.Context, dsn string) (created bool, err error) {
	cfg, err := Config(dsn)
	if err != nil {
		return false, err
	}
	if cfg.DBName == "" {
		return false, errors.New("MYSQL_DSN names no database (…/salon)")
	}
	if !dbNameRE.MatchString(cfg.DBName) {
		return false, fmt.Errorf("MYSQL_DSN: database name %q: use letters, digits and _ only", cfg.DBName)
	}
	probe, err := Open(dsn, Options{MaxOpenConns: 1})
	if err != nil {
		return false, err
	}
	err = probe.Ping(ctx)
	probe.Close()
	var me *drv.MySQLError
	switch {
	case err == nil:
		return false, nil
	case !errors.As(err, &me) || me.Number != 1049: // ER_BAD_DB_ERROR: unknown database
		return false, err
	}

	server := cfg.Clone()
	server.DBName = ""
	conn, err := drv.NewConnector(server)
	if err != nil {
		return false, err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	// The name was checked against dbNameRE above; it cannot be a parameter.
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+cfg.DBName+"` CHARACTER SET utf8mb4"); err != nil {
		return false, fmt.Errorf("create database %s: %w", cfg.DBName, err)
	}
	return true, nil
}
