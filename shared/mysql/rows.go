package mysql

import (
	"context"
	"database/sql"
)

// closeRows closes rows read to the end and reports the error that ended
// them, if any.
func closeRows(rows *sql.Rows) error {
	if err := rows.Close(); err != nil {
		return err
	}
	return rows.Err()
}

// insertRows inserts rows (each of the same width) with head, up to 500 rows
// a statement.
func insertRows(ctx context.Context, tx *sql.Tx, head string, rows [][]any) error {
	for len(rows) > 0 {
		n := min(len(rows), 500)
		var args []any
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, head+repeatRows("("+placeholders(len(rows[0]))+")", n), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
