package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"salon/shared/booking"
)

// The menu: services, technicians and the services each does, her hours
// (cells, laid by CreateSlots) and time off, and the facts a booking of a
// service or a day's free starts are decided on. The rules are package
// booking's (ServiceUpdate.Apply, TechnicianUpdate.Apply, TechniciansToTry,
// FreeStarts); the store reads and writes.

const serviceColumns = `service_id, name, minutes, price_fen, deposit_fen, active`

func scanService(row interface{ Scan(...any) error }) (*booking.Service, error) {
	var s booking.Service
	if err := row.Scan(&s.ID, &s.Name, &s.Minutes, &s.PriceFen, &s.DepositFen, &s.Active); err != nil {
		return nil, err
	}
	return &s, nil
}

// Menu returns the active services, each with the active technicians who do
// it (by id), in the order they were added: the public menu, two statements.
func (db *DB) Menu(ctx context.Context) (_ []booking.Service, err error) {
	defer wrap(&err, "Menu()")
	services, err := db.services(ctx, `WHERE active = 1`)
	if err != nil || len(services) == 0 {
		return services, err
	}
	rows, err := db.db.QueryContext(ctx, `SELECT ts.service_id, t.technician_id, t.name
		FROM t_technician_service ts JOIN t_technician t ON t.technician_id = ts.technician_id
		WHERE t.active = 1 ORDER BY ts.service_id, t.technician_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byService := map[int64][]booking.TechnicianRef{}
	for rows.Next() {
		var sid int64
		var t booking.TechnicianRef
		if err := rows.Scan(&sid, &t.ID, &t.Name); err != nil {
			return nil, err
		}
		byService[sid] = append(byService[sid], t)
	}
	for i := range services {
		services[i].Technicians = byService[services[i].ID]
		if services[i].Technicians == nil {
			services[i].Technicians = []booking.TechnicianRef{}
		}
	}
	return services, rows.Err()
}

// ListServices returns every service, inactive ones too, in the order they
// were added: the salon's list.
func (db *DB) ListServices(ctx context.Context) (_ []booking.Service, err error) {
	defer wrap(&err, "ListServices()")
	return db.services(ctx, ``)
}

func (db *DB) services(ctx context.Context, where string) ([]booking.Service, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+serviceColumns+` FROM t_service `+where+` ORDER BY service_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []booking.Service{}
	for rows.Next() {
		s, err := scanService(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	return out, rows.Err()
}

// CreateService adds s (booking.ServiceUpdate.NewService made it) to the menu.
func (db *DB) CreateService(ctx context.Context, s booking.Service) (_ *booking.Service, err error) {
	defer wrap(&err, "CreateService()")
	res, err := db.db.ExecContext(ctx, `INSERT INTO t_service (name, minutes, price_fen, deposit_fen, active, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, s.Name, s.Minutes, s.PriceFen, s.DepositFen, s.Active)
	if err != nil {
		return nil, err
	}
	if s.ID, err = res.LastInsertId(); err != nil {
		return nil, err
	}
	return &s, nil
}

// UpdateService applies u to service id, in one transaction: the row locked,
// booking.ServiceUpdate.Apply deciding on it as it is (with GRID_MINUTES), the
// result written. So two concurrent changes never leave a deposit above the
// price. A booking keeps the length and price it was made with.
func (db *DB) UpdateService(ctx context.Context, id int64, u booking.ServiceUpdate) (_ *booking.Service, err error) {
	defer wrap(&err, "UpdateService(service %d)", id)
	var out booking.Service
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		s, err := scanService(tx.QueryRowContext(ctx, `SELECT `+serviceColumns+` FROM t_service WHERE service_id = ? FOR UPDATE`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return booking.Errorf(booking.ENOTFOUND, "service %d not found", id)
		} else if err != nil {
			return err
		}
		if out, err = u.Apply(*s, db.Policy.GridMinutes); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE t_service SET name = ?, minutes = ?, price_fen = ?, deposit_fen = ?, active = ?,
			updated_at = UTC_TIMESTAMP(6) WHERE service_id = ?`, out.Name, out.Minutes, out.PriceFen, out.DepositFen, out.Active, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

const technicianColumns = `technician_id, name, active, COALESCE(staff_id, 0)`

// ListTechnicians returns every technician, inactive ones too, each with the
// services she does, in the order they were added.
func (db *DB) ListTechnicians(ctx context.Context) (_ []booking.Technician, err error) {
	defer wrap(&err, "ListTechnicians()")
	return technicians(ctx, db.db, ``, ``)
}

// FindTechnician returns one technician with her services.
func (db *DB) FindTechnician(ctx context.Context, id int64) (_ *booking.Technician, err error) {
	defer wrap(&err, "FindTechnician(technician %d)", id)
	ts, err := technicians(ctx, db.db, `WHERE technician_id = ?`, ``, id)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, booking.Errorf(booking.ENOTFOUND, "technician %d not found", id)
	}
	return &ts[0], nil
}

// technicians reads the technicians where says, with their services: two
// statements, whatever their number. lock is `FOR UPDATE` to lock their rows.
func technicians(ctx context.Context, q querier, where, lock string, args ...any) ([]booking.Technician, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+technicianColumns+` FROM t_technician `+where+` ORDER BY technician_id `+lock, args...)
	if err != nil {
		return nil, err
	}
	out := []booking.Technician{}
	index := map[int64]int{}
	for rows.Next() {
		t := booking.Technician{ServiceIDs: []int64{}}
		if err := rows.Scan(&t.ID, &t.Name, &t.Active, &t.StaffID); err != nil {
			rows.Close()
			return nil, err
		}
		index[t.ID] = len(out)
		out = append(out, t)
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	ids := make([]int64, len(out))
	for i, t := range out {
		ids[i] = t.ID
	}
	rows, err = q.QueryContext(ctx, `SELECT technician_id, service_id FROM t_technician_service
		WHERE technician_id IN (`+placeholders(len(ids))+`) ORDER BY technician_id, service_id`, int64Args(ids)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var tid, sid int64
		if err := rows.Scan(&tid, &sid); err != nil {
			return nil, err
		}
		out[index[tid]].ServiceIDs = append(out[index[tid]].ServiceIDs, sid)
	}
	return out, rows.Err()
}

// CreateTechnician adds t (booking.TechnicianUpdate.NewTechnician made it),
// with her services, in one transaction: services that do not exist, or a
// staff account that does not, are BAD_REQUEST; an account another
// technician has is INVALID_STATE.
func (db *DB) CreateTechnician(ctx context.Context, t booking.Technician) (_ *booking.Technician, err error) {
	defer wrap(&err, "CreateTechnician()")
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		if err := checkTechnicianRefs(ctx, tx, t); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO t_technician (name, active, staff_id, created_at, updated_at)
			VALUES (?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, t.Name, t.Active, nullID(t.StaffID))
		if err := staffTaken(err, t.StaffID); err != nil {
			return err
		}
		if t.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		return setTechnicianServices(ctx, tx, t.ID, t.ServiceIDs)
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// UpdateTechnician applies u to technician id, in one transaction: the row
// locked, booking.TechnicianUpdate.Apply deciding on her as she is, the
// references checked as at CreateTechnician, the result written (her
// services replaced when u names them). Her cells and bookings stay: a
// service she no longer does keeps the bookings already made.
func (db *DB) UpdateTechnician(ctx context.Context, id int64, u booking.TechnicianUpdate) (_ *booking.Technician, err error) {
	defer wrap(&err, "UpdateTechnician(technician %d)", id)
	var out booking.Technician
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		ts, err := technicians(ctx, tx, `WHERE technician_id = ?`, `FOR UPDATE`, id)
		if err != nil {
			return err
		}
		if len(ts) == 0 {
			return booking.Errorf(booking.ENOTFOUND, "technician %d not found", id)
		}
		if out, err = u.Apply(ts[0]); err != nil {
			return err
		}
		if err := checkTechnicianRefs(ctx, tx, out); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE t_technician SET name = ?, active = ?, staff_id = ?, updated_at = UTC_TIMESTAMP(6)
			WHERE technician_id = ?`, out.Name, out.Active, nullID(out.StaffID), id)
		if err := staffTaken(err, out.StaffID); err != nil {
			return err
		}
		if u.ServiceIDs == nil {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM t_technician_service WHERE technician_id = ?`, id); err != nil {
			return err
		}
		return setTechnicianServices(ctx, tx, id, out.ServiceIDs)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// checkTechnicianRefs refuses services or a staff account that do not exist
// (NOT_FOUND, as for any id the request names that does not exist). Neither
// is ever deleted, so a read
// suffices.
func checkTechnicianRefs(ctx context.Context, tx *sql.Tx, t booking.Technician) error {
	if len(t.ServiceIDs) > 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_service WHERE service_id IN (`+placeholders(len(t.ServiceIDs))+`)`,
			int64Args(t.ServiceIDs)...).Scan(&n); err != nil {
			return err
		}
		if n != len(t.ServiceIDs) {
			return booking.Errorf(booking.ENOTFOUND, "serviceIds: %d of %v do not exist", len(t.ServiceIDs)-n, t.ServiceIDs)
		}
	}
	if t.StaffID != 0 {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_staff WHERE staff_id = ?`, t.StaffID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return booking.Errorf(booking.ENOTFOUND, "staffId: staff %d does not exist", t.StaffID)
		}
	}
	return nil
}

// staffTaken is err, or INVALID_STATE when it is the unique key of a staff
// account another technician has.
func staffTaken(err error, staffID int64) error {
	if err == nil {
		return nil
	}
	if mysqlErrNo(err) == errDupEntry && containsWord(err.Error(), "uk_technician_staff") {
		return booking.Errorf(booking.EINVALIDSTATE, "staff %d is another technician's account", staffID)
	}
	return err
}

func setTechnicianServices(ctx context.Context, tx *sql.Tx, tech int64, services []int64) error {
	if len(services) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(services))
	for _, s := range services {
		args = append(args, tech, s)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO t_technician_service (technician_id, service_id) VALUES `+repeatRows(`(?, ?)`, len(services)), args...)
	return err
}

// TakeTimeOff closes technician's cells that start in [from, to), all or
// nothing, in one transaction, and reports how many it closed (cells closed
// already, or none there, are not counted). The cells are locked first
// (FOR UPDATE), as a booking's conditional statement locks them to take
// them: a reservation racing the time off either took its cells first, and
// the time off then finds them booked and is refused, or finds them closed
// and is refused itself. A cell someone holds refuses the whole time off
// with INVALID_STATE naming the bookings in the way (booking.InTheWay),
// nothing closed. One audit record slot_change on her first cell of the
// range says what was closed.
func (db *DB) TakeTimeOff(ctx context.Context, technicianID int64, from, to time.Time, actor string) (_ int, err error) {
	defer wrap(&err, "TakeTimeOff(technician %d, %s)", technicianID, span(from, to))
	var closed int
	var inTheWay []any
	err = db.transact(ctx, nil, func(tx *sql.Tx) error {
		closed, inTheWay = 0, nil
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM t_technician WHERE technician_id = ?`, technicianID).Scan(&exists); err != nil {
			return err
		}
		if exists == 0 {
			return booking.Errorf(booking.ENOTFOUND, "technician %d not found", technicianID)
		}
		rows, err := tx.QueryContext(ctx, `SELECT slot_id, booked FROM t_slot WHERE technician_key = ? AND start_at >= ? AND start_at < ?
			ORDER BY start_at FOR UPDATE`, technicianID, from.UTC(), to.UTC())
		if err != nil {
			return err
		}
		var cells, booked []int64
		for rows.Next() {
			var id int64
			var n int
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return err
			}
			cells = append(cells, id)
			if n > 0 {
				booked = append(booked, id)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(booked) > 0 {
			held, err := tx.QueryContext(ctx, `SELECT DISTINCT book_id FROM t_booking_slot WHERE slot_id IN (`+placeholders(len(booked))+`)
				ORDER BY book_id`, int64Args(booked)...)
			if err != nil {
				return err
			}
			if inTheWay, err = scanIDs(held); err != nil {
				return err
			}
			return booking.Errorf(booking.EINVALIDSTATE, "technician %d: %d cells of %s-%s are booked", technicianID, len(booked),
				from.Format(time.RFC3339), to.Format(time.RFC3339))
		}
		if len(cells) == 0 {
			return nil
		}
		res, err := tx.ExecContext(ctx, `UPDATE t_slot SET is_open = 0, updated_at = UTC_TIMESTAMP(6)
			WHERE slot_id IN (`+placeholders(len(cells))+`) AND is_open = 1`, int64Args(cells)...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		closed = int(n)
		return insertAudit(ctx, tx, booking.AuditRecord{SlotID: cells[0], Event: booking.EventSlotChange, FromStatus: -1, ToStatus: -1,
			Actor: actor, Reason: fmt.Sprintf("技师 %d 休息 %s 至 %s：关闭 %d 个时段", technicianID,
				from.UTC().Format("2006-01-02 15:04"), to.UTC().Format("15:04 UTC"), closed)})
	})
	if len(inTheWay) > 0 && booking.IsCode(err, booking.EINVALIDSTATE) {
		var e *booking.Error
		errors.As(err, &e)
		bs, rerr := db.listBookings(ctx, `WHERE b.book_id IN (`+placeholders(len(inTheWay))+`) ORDER BY s.start_at, b.book_id`, inTheWay...)
		if rerr != nil {
			return 0, rerr
		}
		if rerr := db.attachCustomers(ctx, bs); rerr != nil {
			return 0, rerr
		}
		return 0, &booking.InTheWay{Err: e, Bookings: bs}
	}
	return closed, err
}

// ServiceDay reads the facts of service serviceID's bookings on the shop day
// [dayStart, dayEnd): the service (nil when it is not on the menu), the
// technician asked for (technicianID; 0: every active one who does it) and
// each one's cells of the day with her booked minutes, and the database's
// clock. Three statements whatever the number of technicians: the service and
// the clock, the technicians, their cells (serviceFacts).
func (db *DB) ServiceDay(ctx context.Context, serviceID, technicianID int64, dayStart, dayEnd time.Time) (_ booking.ServiceFacts, err error) {
	defer wrap(&err, "ServiceDay(service %d, technician %d, %s)", serviceID, technicianID, span(dayStart, dayEnd))
	f, _, err := db.serviceFacts(ctx, serviceID, technicianID, dayStart, dayEnd, "")
	return f, err
}

// serviceFacts is ServiceDay, with how many unfinished bookings openid holds
// ("" counts none) in its first statement: the pre-read of a reservation. The
// cells are read a longest service past the day's end, so a span that runs
// past midnight is judged on every cell; the booked minutes count the day's
// own.
func (db *DB) serviceFacts(ctx context.Context, serviceID, technicianID int64, dayStart, dayEnd time.Time, openid string) (booking.ServiceFacts, int, error) {
	f := booking.ServiceFacts{Named: technicianID, DayStart: dayStart, DayEnd: dayEnd}
	var active int
	var s booking.Service
	var id sql.NullInt64
	var on sql.NullBool
	var name sql.NullString
	var minutes sql.NullInt32
	var price, deposit sql.NullInt64
	err := db.db.QueryRowContext(ctx, `SELECT UTC_TIMESTAMP(6), (SELECT COUNT(*) FROM t_booking WHERE active_openid = ?),
			sv.service_id, sv.name, sv.minutes, sv.price_fen, sv.deposit_fen, sv.active
		FROM (SELECT 1 AS one) one LEFT JOIN t_service sv ON sv.service_id = ?`, openid, serviceID).
		Scan(&f.Now, &active, &id, &name, &minutes, &price, &deposit, &on)
	if err != nil {
		return f, 0, err
	}
	if !id.Valid || !on.Bool {
		return f, active, nil // not on the menu
	}
	s = booking.Service{ID: id.Int64, Name: name.String, Minutes: int(minutes.Int32), PriceFen: price.Int64, DepositFen: deposit.Int64, Active: true}
	f.Service = &s
	cands, err := candidates(ctx, db.db, serviceID, technicianID)
	if err != nil || len(cands) == 0 {
		return f, active, err
	}
	ids := make([]int64, len(cands))
	for i, c := range cands {
		ids[i] = c.Technician.ID
	}
	cells, err := techniciansCells(ctx, db.db, ids, dayStart, dayEnd.Add(booking.MaxServiceMinutes*time.Minute))
	if err != nil {
		return f, active, err
	}
	for i := range cands {
		cands[i].Cells = cells[cands[i].Technician.ID]
		var today []booking.Slot
		for _, c := range cands[i].Cells {
			if c.StartAt.Before(dayEnd) {
				today = append(today, c)
			}
		}
		cands[i].BookedMinutes = booking.BookedMinutes(today)
	}
	f.Candidates = cands
	return f, active, nil
}

// candidates are the technicians a booking of service serviceID considers,
// without their cells: the one named (technicianID), if she exists, with
// whether she is active and does it; else every active technician who does
// it.
func candidates(ctx context.Context, q querier, serviceID, technicianID int64) ([]booking.Candidate, error) {
	query := `SELECT t.technician_id, t.name, t.active = 1 AND EXISTS (SELECT 1 FROM t_technician_service ts
			WHERE ts.technician_id = t.technician_id AND ts.service_id = ?)
		FROM t_technician t WHERE t.technician_id = ?`
	args := []any{serviceID, technicianID}
	if technicianID == 0 {
		query = `SELECT t.technician_id, t.name, 1 FROM t_technician_service ts JOIN t_technician t ON t.technician_id = ts.technician_id
			WHERE ts.service_id = ? AND t.active = 1 ORDER BY t.technician_id`
		args = []any{serviceID}
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []booking.Candidate
	for rows.Next() {
		var c booking.Candidate
		if err := rows.Scan(&c.Technician.ID, &c.Technician.Name, &c.Does); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
