package mysqltest

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	drv "github.com/go-sql-driver/mysql"

	"salon/shared/booking"
	"salon/shared/mysql"
)

// TestPrivateServer: the private server starts with a tmpdir of its own (not
// the system's, shared with every other mariadbd), refuses the application
// account's connections beyond max_connections with 1040, stops, and starts
// again with its data.
func TestPrivateServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := StartServer(t, ServerOptions{MaxConnections: 10})
	store, dsn := srv.Open(t, 1)
	slot := AddSlot(t, store, 48*3600e9, 3, 5000)

	var tmpdir string
	if err := store.SQL().QueryRowContext(ctx, "SELECT @@tmpdir").Scan(&tmpdir); err != nil {
		t.Fatal(err)
	}
	if tmpdir != srv.tmpDir() {
		t.Errorf("tmpdir %q, want the server's own %q", tmpdir, srv.tmpDir())
	}

	// Hold connections until the server refuses one.
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var refused error
	for range 20 {
		c, err := raw.Conn(ctx)
		if err != nil {
			refused = err
			break
		}
		held = append(held, c)
	}
	var me *drv.MySQLError
	if !errors.As(refused, &me) || me.Number != 1040 {
		t.Fatalf("after %d connections: %v, want 1040 Too many connections", len(held), refused)
	}
	if got := mysql.Classify(refused); !booking.IsCode(got, booking.EUNAVAILABLE) {
		t.Errorf("1040 classified %v", got)
	}
	for _, c := range held {
		c.Close()
	}
	held = nil

	srv.Stop()
	if err := store.Ping(ctx); err == nil {
		t.Fatal("a stopped server answered")
	} else if got := mysql.Classify(err); !booking.IsCode(got, booking.EUNAVAILABLE) {
		t.Errorf("stopped server: %v classified %v", err, got)
	}
	srv.Start()
	if _, err := store.FindSlot(ctx, slot); err != nil {
		t.Errorf("after the restart: %v\n%s", err, srv.Log())
	}
}
