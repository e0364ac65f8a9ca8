package mysql_test

import (
	"context"
	"strings"
	"testing"

	"salon/shared/mysql"
	"salon/shared/mysql/mysqltest"
)

// mysql8SQLMode is MySQL 8.0's default sql_mode, what TencentDB for MySQL 8.0
// runs with unless the instance's parameters change it.
const mysql8SQLMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// TestConnectionsRunMySQL8SQLMode: every connection of the store runs with
// exactly MySQL 8.0's default sql_mode, whatever the server's default (MariaDB
// 10.11's differs) and whatever the DSN asks, so the tests here exercise the
// statements under production's rules. Several connections held at once, so
// that each one is a new session.
func TestConnectionsRunMySQL8SQLMode(t *testing.T) {
	t.Parallel()
	dsn := mysqltest.NewDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	for _, d := range []string{dsn, dsn + sep + "sql_mode=%27ANSI_QUOTES%27"} {
		store, err := mysql.Open(d, mysql.Options{MaxOpenConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		for i := 0; i < 4; i++ {
			conn, err := store.SQL().Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var session, global string
			if err := conn.QueryRowContext(context.Background(), `SELECT @@SESSION.sql_mode, @@GLOBAL.sql_mode`).Scan(&session, &global); err != nil {
				t.Fatal(err)
			}
			if session != mysql8SQLMode {
				t.Errorf("connection %d of %s: sql_mode %q (server default %q), want %q", i, d, session, global, mysql8SQLMode)
			}
		}
	}
}
