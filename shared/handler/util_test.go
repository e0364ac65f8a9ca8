package handler

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
func pad12(n int64) string  { return fmt.Sprintf("%012d", n) }

func shanghai(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
