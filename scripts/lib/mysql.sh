# Sourced by scripts/test.sh and scripts/dev.sh. ensure_mysql makes MYSQL_DSN point
# at a MySQL that answers: the one already at MYSQL_DSN (default: the local one),
# or else a private MariaDB under .local/mariadb on its own port, which it starts
# (installing Debian's mariadb-server first when it is missing and it may). It never
# starts, stops or reconfigures a system database.

: "${MYSQL_DSN:=root@tcp(127.0.0.1:3306)/salon}"
PRIVATE_PORT="${SALON_PRIVATE_MYSQL_PORT:-3317}"

# dsn_host_port prints "host port" of a tcp(...) DSN, nothing for a socket DSN.
dsn_host_port() {
  local addr
  addr=$(printf '%s' "$1" | sed -n 's/.*@tcp(\([^)]*\)).*/\1/p')
  [ -n "$addr" ] || return 0
  printf '%s %s\n' "${addr%:*}" "${addr##*:}"
}

tcp_answers() { # host port
  (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

mysql_answers() {
  local hp
  hp=$(dsn_host_port "$MYSQL_DSN")
  if [ -z "$hp" ]; then
    # A socket DSN: trust it; the tests will say clearly if it does not answer.
    return 0
  fi
  # shellcheck disable=SC2086
  tcp_answers $hp
}

start_private_mariadb() {
  local dir="$PWD/.local/mariadb"
  local mariadbd
  mariadbd=$(command -v mariadbd || ls /usr/sbin/mariadbd 2>/dev/null || true)
  if [ -z "$mariadbd" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "mysql: no server answers and mariadbd is missing; installing Debian's mariadb-server" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-server >&2 ||
        { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-server >&2; }
      mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
    else
      echo "mysql: nothing answers at MYSQL_DSN=$MYSQL_DSN and mariadbd is not installed." >&2
      echo "mysql: install it (sudo apt-get install mariadb-server) or point MYSQL_DSN at a MySQL 8.0 / MariaDB 10.11." >&2
      return 1
    fi
  fi
  # Its own tmpdir, beside the data directory (inside it, MariaDB would list it as
  # a database): by default every mariadbd on the machine uses /tmp, and their
  # temporary tables (#sql-temptable-<pid>-...) then collide ("Error on delete of
  # '#sql-temptable-...MAI' (Errcode: 2)"). mariadb-install-db passes it on to its
  # bootstrap server.
  mkdir -p "$dir" "$dir/tmp"
  if ! tcp_answers 127.0.0.1 "$PRIVATE_PORT"; then
    if [ ! -d "$dir/data/mysql" ]; then
      echo "mysql: initialising a private MariaDB in $dir" >&2
      mariadb-install-db --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" --auth-root-authentication-method=normal \
        --user="$(id -un)" --skip-test-db >"$dir/install.log" 2>&1 ||
        { cat "$dir/install.log" >&2; return 1; }
    fi
    echo "mysql: starting a private MariaDB on 127.0.0.1:$PRIVATE_PORT (data in $dir)" >&2
    nohup "$mariadbd" --no-defaults --datadir="$dir/data" --socket="$dir/mysqld.sock" \
      --pid-file="$dir/mysqld.pid" --tmpdir="$dir/tmp" --port="$PRIVATE_PORT" --bind-address=127.0.0.1 \
      --user="$(id -un)" --max-connections=500 >"$dir/mysqld.log" 2>&1 &
    for _ in $(seq 1 120); do
      tcp_answers 127.0.0.1 "$PRIVATE_PORT" && break
      sleep 0.5
    done
    tcp_answers 127.0.0.1 "$PRIVATE_PORT" || { tail -20 "$dir/mysqld.log" >&2; return 1; }
  fi
  export MYSQL_DSN="root@tcp(127.0.0.1:$PRIVATE_PORT)/salon"
  echo "mysql: using the private MariaDB: MYSQL_DSN=$MYSQL_DSN (stop it with: kill \$(cat $dir/mysqld.pid))" >&2
}

ensure_mysql() {
  if mysql_answers; then
    export MYSQL_DSN
    return 0
  fi
  echo "mysql: nothing answers at MYSQL_DSN=$MYSQL_DSN" >&2
  start_private_mariadb
}
