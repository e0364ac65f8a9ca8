-- Services and technicians: a nail salon sells a technician's time for
-- services of different lengths. Seat-mode slots stay exactly as they are.
--
-- t_service is the menu; t_technician the people, each with the services she
-- does (t_technician_service) and optionally the staff account she signs in
-- with (one technician per account). Her time is t_slot rows with her
-- technician_id: cells of GRID_MINUTES, capacity 1, no price of their own (the
-- service has it), laid by her hours. A booking of a service holds every cell
-- of its span, one t_booking_slot row each, taken by one conditional statement
-- that takes all of them or none; t_booking.slot_id is its first cell.
-- Runs on MySQL 8.0 and MariaDB 10.11 (only MariaDB has run it).

CREATE TABLE t_service (
  service_id  BIGINT      NOT NULL AUTO_INCREMENT,
  name        VARCHAR(30) NOT NULL,
  minutes     INT         NOT NULL,
  price_fen   BIGINT      NOT NULL,
  deposit_fen BIGINT      NOT NULL,
  active      TINYINT(1)  NOT NULL DEFAULT 1,
  created_at  DATETIME(6) NOT NULL,
  updated_at  DATETIME(6) NOT NULL,
  PRIMARY KEY (service_id),
  -- booking.ServiceUpdate.Apply decides these; the database keeps them true
  -- whatever writes the row (a PATCH of the price under an unchanged deposit).
  CONSTRAINT chk_service_minutes CHECK (minutes > 0 AND minutes <= 480),
  CONSTRAINT chk_service_price CHECK (price_fen >= 0 AND price_fen <= 1000000 AND deposit_fen >= 0 AND deposit_fen <= price_fen)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_technician (
  technician_id BIGINT      NOT NULL AUTO_INCREMENT,
  name          VARCHAR(20) NOT NULL,
  active        TINYINT(1)  NOT NULL DEFAULT 1,
  staff_id      BIGINT      NULL,
  created_at    DATETIME(6) NOT NULL,
  updated_at    DATETIME(6) NOT NULL,
  PRIMARY KEY (technician_id),
  -- A staff account is at most one technician: the console shows her own
  -- column first.
  UNIQUE KEY uk_technician_staff (staff_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE t_technician_service (
  technician_id BIGINT NOT NULL,
  service_id    BIGINT NOT NULL,
  PRIMARY KEY (technician_id, service_id),
  KEY idx_technician_service_service (service_id, technician_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- A slot is the seat schedule's (technician_id NULL) or one technician's
-- cell. One slot per start stays the schedule's rule, per owner now:
-- technician_key is the technician, 0 for the seat schedule, so a schedule
-- and every technician's hours can each be sent twice and skip the starts
-- they have (a NULL in a unique key would not collide). The seat schedule's
-- reads by start use uk_slot_start with technician_key = 0; idx_slot_start
-- keeps the reads of every slot by start (the day's bookings, drift) as they
-- were. A cell holds one booking and has no price: chk_slot_cell, beside
-- chk_slot_booked, the last line of defence against two bookings of one
-- technician at once. The table is rebuilt (a stored generated column).
ALTER TABLE t_slot
  ADD COLUMN technician_id BIGINT NULL,
  ADD COLUMN technician_key BIGINT AS (IFNULL(technician_id, 0)) STORED,
  DROP KEY uk_slot_start,
  ADD UNIQUE KEY uk_slot_start (technician_key, start_at),
  ADD KEY idx_slot_start (start_at),
  ADD CONSTRAINT chk_slot_cell CHECK (technician_id IS NULL OR (capacity = 1 AND price_fen = 0));

-- A booking of a service: the service, the technician (her cells hold it),
-- the full price when it was booked (amount_fen stays what is paid online:
-- the deposit) and its length, so it ends at its first cell's start plus
-- minutes whatever the service becomes later. All NULL in seat mode. Columns
-- at the end, nullable, no default: an instant change on both servers.
ALTER TABLE t_booking
  ADD COLUMN service_id BIGINT NULL,
  ADD COLUMN technician_id BIGINT NULL,
  ADD COLUMN price_fen BIGINT NULL,
  ADD COLUMN minutes INT NULL;
