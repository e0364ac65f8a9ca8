package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"salon/shared/booking"
)

// The reservation's write in other forms, measured in the same run as the
// product and the floor: the product's pre-read (preRead), then one CALL of a
// procedure with salon_reserve's parameters and answer (the new booking's id or
// NULL, and whether the slot is full), created here in the bench's database
// only. Each differs from the others in what runs while the slot row is locked,
// from the seat-taking UPDATE to the COMMIT the procedure runs right after, or
// in where the booking's order number is written.
//
// Every form writes the rows the product writes (the booking, its audit
// record, the seat: its t_booking_slot row and booked + 1, and its order
// number where the form stores it) and is counted like the product: bookings
// per slot against capacity, booked against bookings. A form that takes the
// seat last takes it as the product does, by CALL salon_take_seat (the one
// seat path, migration 0019).
type reserveForm struct {
	product
	raw  *sql.DB
	name string
	proc string // the procedure's name
	// tradeApart: the order number is written after the CALL, in a round trip
	// of its own (as a write at prepay would be).
	tradeApart bool
}

func (f *reserveForm) Name() string { return f.name }

func (f *reserveForm) Reserve(ctx context.Context, _ int, slot int64, customer string) (outcome, error) {
	price, start, now, ok, err := f.preRead(ctx, f.raw, slot, customer)
	if err != nil {
		return 0, err
	}
	if !ok {
		return soldOut, nil
	}
	// The product's own definition of a new hold, as reserveTx uses it.
	hold := f.store.Policy.NewHold(booking.Slot{ID: slot, StartAt: start, PriceFen: price}, now, booking.EventReserve)
	var (
		id   sql.NullInt64
		full bool
	)
	// The name is one of formProcedures', never input.
	err = f.raw.QueryRowContext(ctx, `CALL `+f.proc+`(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, slot, f.store.Policy.BookingWindowDays, customer,
		int64(hold.Status), hold.AmountFen, nil, hold.LockExpire, now, booking.EventReserve, booking.ActorCustomer, "hold").
		Scan(&id, &full)
	switch {
	case err != nil:
		return 0, err
	case id.Valid && f.tradeApart:
		_, err := f.raw.ExecContext(ctx, `UPDATE t_booking SET out_trade_no = ? WHERE book_id = ? AND out_trade_no IS NULL`, booking.OutTradeNo(id.Int64), id.Int64)
		if err != nil {
			return 0, err
		}
		return taken, nil
	case id.Valid:
		return taken, nil
	case full:
		return soldOut, nil
	}
	return 0, fmt.Errorf("slot %d closed meanwhile", slot)
}

// The forms' names, as the report and -contenders name them.
const (
	cSeatFirst        = "form: seat first (0007)"
	cSeatFirstNoTrade = "form: seat first, no order-number write"
	cSeatLast         = "form: inserts first, seat last"
	cSeatLastChecked  = "form: re-read, inserts first, seat last"
	cSeatLastNoTrade  = "form: inserts first, seat last, no order-number write"
	cTradeAfterCommit = "form: inserts first, seat last, order number after the COMMIT"
	cTradeApart       = "form: inserts first, seat last, order number in a round trip of its own"
)

// formProcedure is one form: its contender's name and its procedure (body ""
// when it calls another form's procedure).
type formProcedure struct {
	name, proc, body string
	tradeApart       bool
}

// Where a form writes the booking's order number.
type tradeAt int

const (
	tradeNowhere     tradeAt = iota
	tradeInside              // in the transaction, right after the booking (the product)
	tradeAfterCommit         // after the COMMIT, in the same CALL: autocommitted on its own
)

// The pieces the forms share, as in salon_reserve (migrations 0007, 0013, 0019
// and 0028: the booking's start read from its slot by a lockless read).
const (
	formParams = `(
  IN p_slot_id BIGINT, IN p_window_days INT, IN p_openid VARCHAR(64) CHARACTER SET utf8mb4, IN p_status TINYINT,
  IN p_amount_fen BIGINT, IN p_idem_key VARCHAR(64) CHARACTER SET utf8mb4, IN p_lock_expire DATETIME(6), IN p_now DATETIME(6),
  IN p_event VARCHAR(32) CHARACTER SET utf8mb4, IN p_actor VARCHAR(16) CHARACTER SET utf8mb4, IN p_reason VARCHAR(255) CHARACTER SET utf8mb4)
  MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v_book_id BIGINT DEFAULT NULL;
  DECLARE v_start DATETIME DEFAULT NULL;
  DECLARE v_taken INT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
`
	// formSeat is the seat taken before the booking exists (the seat-first
	// forms): the conditional UPDATE alone, its row written with the booking.
	formSeat = `UPDATE t_slot SET booked = booked + 1
    WHERE slot_id = p_slot_id AND ((is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY) AND booked < capacity);
  SET v_taken = ROW_COUNT();
`
	formSeatRow = `INSERT INTO t_booking_slot (book_id, slot_id) VALUES (v_book_id, p_slot_id);
`
	formBooking = `SELECT start_at INTO v_start FROM t_slot WHERE slot_id = p_slot_id;
    INSERT INTO t_booking (slot_id, openid, status, amount_fen, idem_key, lock_expire, created_at, updated_at, starts_at)
      VALUES (p_slot_id, p_openid, p_status, p_amount_fen, p_idem_key, p_lock_expire, p_now, p_now, v_start);
    SET v_book_id = LAST_INSERT_ID();
`
	formTrade = `UPDATE t_booking SET out_trade_no = CONCAT('BK', LPAD(v_book_id, GREATEST(12, LENGTH(v_book_id)), '0'))
      WHERE book_id = v_book_id;
`
	formAudit = `INSERT INTO t_audit (book_id, slot_id, event, from_status, to_status, actor, reason, created_at)
      VALUES (v_book_id, p_slot_id, p_event, NULL, p_status, p_actor, p_reason, UTC_TIMESTAMP(6));
`
	formAnswer = `  SELECT v_book_id, booked >= capacity FROM t_slot WHERE slot_id = p_slot_id;
END`
)

// formTakeSeat is the seat taken last, as salon_reserve takes it: the one
// seat-taking procedure, under the rule "open for booking", its SIGNAL handled.
var formTakeSeat = fmt.Sprintf(`BEGIN
    DECLARE CONTINUE HANDLER FOR SQLSTATE '45000' SET v_taken = 0;
    SET v_taken = 1;
    CALL salon_take_seat(v_book_id, p_slot_id, %d, p_window_days);
  END;
`, int(booking.SeatIfOpenForBooking))

// seatFirst takes the seat, then (if it did) writes the booking, [its order
// number], its audit record and its seat row, then commits: the slot row stays
// locked through the writes.
func seatFirst(trade bool) string {
	w := formBooking + formAudit + formSeatRow
	if trade {
		w = formBooking + formTrade + formAudit + formSeatRow
	}
	return formParams + "  START TRANSACTION;\n  " + formSeat + "  IF v_taken = 1 THEN\n    " + w + "  END IF;\n  COMMIT;\n" + formAnswer
}

// seatLast writes the booking, [its order number] and its audit record, then
// takes the seat (its row, then the UPDATE) and commits at once: the slot row
// is locked for its UPDATE and the COMMIT. A request that passed the pre-read
// and lost the seat rolls its rows back. With reread, a consistent (lockless)
// read of the slot first refuses a full or closed slot without a write, as the
// pre-read does, so only a request that lost the seat within the procedure's
// own few statements writes and rolls back. With tradeAfterCommit the order
// number is written after the COMMIT, autocommitted: the slot row is free by
// then, and the write is a transaction of its own.
func seatLast(trade tradeAt, reread bool) string {
	w := formBooking + formAudit
	if trade == tradeInside {
		w = formBooking + formTrade + formAudit
	}
	after := ""
	if trade == tradeAfterCommit {
		after = "    " + formTrade
	}
	var b strings.Builder
	b.WriteString(formParams)
	if reread {
		b.WriteString(`  IF NOT EXISTS (SELECT 1 FROM t_slot WHERE slot_id = p_slot_id AND ((is_open = 1 AND start_at > UTC_TIMESTAMP(6) AND start_at <= UTC_TIMESTAMP(6) + INTERVAL p_window_days DAY) AND booked < capacity)) THEN
    SELECT NULL, booked >= capacity FROM t_slot WHERE slot_id = p_slot_id;
  ELSE
`)
	}
	b.WriteString("  START TRANSACTION;\n    " + w + "  " + formTakeSeat)
	b.WriteString("  IF v_taken = 1 THEN\n    COMMIT;\n" + after + "  ELSE\n    ROLLBACK;\n    SET v_book_id = NULL;\n  END IF;\n")
	if reread {
		b.WriteString("  " + strings.TrimSuffix(formAnswer, "END") + "  END IF;\nEND")
	} else {
		b.WriteString(formAnswer)
	}
	return b.String()
}

// formProcedures are the forms measured, each with its procedure.
var formProcedures = []formProcedure{
	{name: cSeatFirst, proc: "bench_reserve_seat_first", body: seatFirst(true)},
	{name: cSeatFirstNoTrade, proc: "bench_reserve_seat_first_no_trade", body: seatFirst(false)},
	{name: cSeatLast, proc: "bench_reserve_seat_last", body: seatLast(tradeInside, false)},
	{name: cSeatLastChecked, proc: "bench_reserve_seat_last_reread", body: seatLast(tradeInside, true)},
	{name: cSeatLastNoTrade, proc: "bench_reserve_seat_last_no_trade", body: seatLast(tradeNowhere, false)},
	{name: cTradeAfterCommit, proc: "bench_reserve_trade_after_commit", body: seatLast(tradeAfterCommit, false)},
	{name: cTradeApart, proc: "bench_reserve_seat_last_no_trade", tradeApart: true},
}

// createForms creates every form's procedure in the fixture's database.
func createForms(ctx context.Context, db *sql.DB) error {
	for _, f := range formProcedures {
		if f.body == "" {
			continue
		}
		if _, err := db.ExecContext(ctx, `CREATE PROCEDURE `+f.proc+f.body); err != nil {
			return fmt.Errorf("%s: %w", f.proc, err)
		}
	}
	return nil
}

// forms are the contenders of every form on one network's pools.
func forms(p *product, raw *sql.DB) []contender {
	var list []contender
	for _, f := range formProcedures {
		list = append(list, &reserveForm{product: *p, raw: raw, name: f.name, proc: f.proc, tradeApart: f.tradeApart})
	}
	return list
}
