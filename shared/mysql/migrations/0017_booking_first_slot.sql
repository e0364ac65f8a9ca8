-- The slot a booking was made in, kept in the booking itself once it moves:
-- a retry of the reservation (its Idempotency-Key with the slot it asked for)
-- must answer the booking wherever it was moved since, and the release run's
-- retention deletes the audit records CLS accepted AUDIT_RETENTION_DAYS ago,
-- the reservation's among them, so the audit trail cannot be what the retry
-- reads. Set by the booking's first move (reschedule.go, runMove), NULL while
-- it has not moved: slot_id is then still that slot.
ALTER TABLE t_booking
  ADD COLUMN first_slot_id BIGINT NULL;

-- The bookings moved before this column: the slot their first record names
-- (the reservation, the waitlist offer or the walk-in that made them), where
-- retention has not yet deleted it. One whose record is gone already has no
-- trace of its first slot left; a retry of its reservation stays refused
-- (INVALID_STATE), as it was.
UPDATE t_booking b
  JOIN (SELECT book_id, MIN(audit_id) AS audit_id FROM t_audit
        WHERE event IN ('reserve', 'waitlist_offer', 'walk_in') AND book_id IS NOT NULL
        GROUP BY book_id) f ON f.book_id = b.book_id
  JOIN t_audit a ON a.audit_id = f.audit_id
SET b.first_slot_id = a.slot_id
WHERE a.slot_id IS NOT NULL AND a.slot_id <> b.slot_id;
