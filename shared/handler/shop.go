package handler

import (
	"time"

	"salon/shared/booking"
)

// Shop is what the API and the console show of the salon's settings besides
// its rules, which are the use cases' own (service.Common's Policy); package
// instance reads it from the settings.
type Shop struct {
	Name string // SHOP_NAME
	// Loc is the shop's time zone (SHOP_TZ), the use cases' Loc, for a
	// function that calls none (login).
	Loc *time.Location
	// TemplateIDs are the subscribe-message template ids of the kinds of
	// notification that are on (WX_TMPL_*), for GET /config.
	TemplateIDs map[booking.NotificationKind]string
}
