package handler

import (
	"net/http"
	"time"

	"salon/shared/apigw"
	"salon/shared/booking"
	"salon/shared/service"
)

// The owner's staff accounts: GET /admin/staff, POST /admin/staff,
// PATCH /admin/staff/{id}. The service allows them to the owner only (the
// admin middleware names who asks).

// staffJSON is an account as the owner sees it: never a password or its hash.
type staffJSON struct {
	StaffID           int64        `json:"staffId"`
	Name              string       `json:"name"`
	Role              booking.Role `json:"role"`
	Disabled          bool         `json:"disabled"`
	PasswordChangedAt string       `json:"passwordChangedAt"`
	CreatedAt         string       `json:"createdAt"`
}

func toStaffJSON(st *booking.Staff, loc *time.Location) staffJSON {
	return staffJSON{StaffID: st.ID, Name: st.Name, Role: st.Role, Disabled: st.Disabled,
		PasswordChangedAt: shopTime(st.PasswordChangedAt, loc), CreatedAt: shopTime(st.CreatedAt, loc)}
}

func (s *adminRoutes) listStaff(w http.ResponseWriter, r *http.Request, team *service.Team) error {
	list, err := team.ListStaff(r.Context())
	if err != nil {
		return err
	}
	out := make([]staffJSON, len(list))
	for i := range list {
		out[i] = toStaffJSON(&list[i], team.Loc)
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"staff": out})
	return nil
}

func (s *adminRoutes) createStaff(w http.ResponseWriter, r *http.Request, team *service.Team) error {
	var body struct {
		Name     string       `json:"name"`
		Role     booking.Role `json:"role"`
		Password string       `json:"password"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	st, err := team.CreateStaff(r.Context(), body.Name, body.Role, body.Password)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusCreated, map[string]any{"staff": toStaffJSON(st, team.Loc)})
	return nil
}

func (s *adminRoutes) updateStaff(w http.ResponseWriter, r *http.Request, team *service.Team) error {
	id, err := apigw.PathInt64(r, "id")
	if err != nil {
		return err
	}
	var body struct {
		Disabled *bool   `json:"disabled"`
		Password *string `json:"password"`
	}
	if err := apigw.DecodeJSON(r, &body); err != nil {
		return err
	}
	st, err := team.UpdateStaff(r.Context(), id, body.Disabled, body.Password)
	if err != nil {
		return err
	}
	apigw.WriteJSON(w, http.StatusOK, map[string]any{"staff": toStaffJSON(st, team.Loc)})
	return nil
}
