package mysql

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrate applies every embedded migration that has not been applied yet, in name
// order, each once. Several processes may run it at the same moment (every cold
// start of the migration step, two developers, CI): a named server lock serialises
// them, and the version table makes a second run a no-op.
func (db *DB) Migrate(ctx context.Context) (err error) {
	defer wrap(&err, "Migrate()")
	return db.migrateTo(ctx, "")
}

// MigrateTo is Migrate that stops after the named version ("" applies all). It
// exists so that a test can build a database as an older release left it, fill
// it, and upgrade it.
func (db *DB) MigrateTo(ctx context.Context, last string) (err error) {
	defer wrap(&err, "MigrateTo(%s)", last)
	return db.migrateTo(ctx, last)
}

// migrateTo is MigrateTo, under the name of the exported method that calls it.
func (db *DB) migrateTo(ctx context.Context, last string) error {
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()

	// GET_LOCK is per server, so the lock name carries the schema's name: tests
	// migrate many fresh databases on one server in parallel.
	var schema string
	if err := conn.QueryRowContext(ctx, `SELECT DATABASE()`).Scan(&schema); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	lock := "salon_migrate:" + schema
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, 60)`, lock).Scan(&got); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("migrate: another migration held the lock for 60s")
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT RELEASE_LOCK(?)`, lock)

	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version VARCHAR(128) NOT NULL PRIMARY KEY,
		applied_at DATETIME(6) NOT NULL
	) ENGINE=InnoDB`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}

	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		version := strings.TrimSuffix(strings.TrimPrefix(name, "migrations/"), ".sql")
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		body, err := migrationFiles.ReadFile(name)
		if err != nil {
			return err
		}
		// DDL commits implicitly in MySQL, so a migration is a list of statements
		// applied one by one; each file must therefore be written to be re-runnable
		// or small enough that a failure is fixed by hand.
		for _, stmt := range splitStatements(string(body)) {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate %s: %w", version, err)
			}
		}
		if _, err := conn.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, UTC_TIMESTAMP(6))`, version); err != nil {
			return fmt.Errorf("migrate %s: %w", version, err)
		}
		if version == last {
			break
		}
	}
	return nil
}

// splitStatements splits a migration into statements: each ends with the
// delimiter at the end of a line, ";" unless a "DELIMITER x" line (the mysql
// client's own directive) changed it, as a stored routine's body, whose
// statements end in ";", needs. Comment lines are dropped.
func splitStatements(sqlText string) []string {
	var out []string
	var cur strings.Builder
	delimiter := ";"
	for _, line := range strings.Split(sqlText, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		if d, ok := cutPrefixFold(trimmed, "DELIMITER "); ok && cur.Len() == 0 {
			delimiter = strings.TrimSpace(d)
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(trimmed, delimiter) {
			stmt := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cur.String()), delimiter))
			out = append(out, stmt)
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// cutPrefixFold is strings.CutPrefix ignoring ASCII case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
