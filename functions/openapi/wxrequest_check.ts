// wxrequest_check.ts: calls of wxrequest.ts that must compile against the
// generated openapi.d.ts, and (each under @ts-expect-error) calls that must
// not: tsc --noEmit (scripts/lib/openapi-lint.sh) fails when a right call is
// refused or a wrong one is accepted. Never run, only type-checked.
import { createClient } from "./wxrequest";

const request = createClient("https://salon.example.com/release");

export async function rightCalls(token: string): Promise<string[]> {
  const seen: string[] = [];
  const login = await request("post", "/login", { body: { code: "0a1b2c" } });
  if (login.status === 200) seen.push(login.data.token, login.data.expiresAt);
  const day = await request("get", "/slots", { query: { date: "2026-12-01" } });
  if (day.status === 200) seen.push(...day.data.slots.map((s) => String(s.slotId + s.priceFen)));
  const reserved = await request("post", "/bookings", { token, body: { slotId: 42 }, header: { "Idempotency-Key": "k-1" } });
  if (reserved.status === 201) seen.push(reserved.data.booking.status, reserved.data.payment?.signType ?? "");
  if (reserved.status === 409) seen.push(reserved.data.code); // "ACTIVE_BOOKING_EXISTS" | "SOLD_OUT" | "INVALID_STATE"
  const cancelled = await request("post", "/bookings/{id}/cancel", { token, path: { id: 42 } });
  if (cancelled.status === 200) seen.push(cancelled.data.booking.refund?.status ?? "no refund");
  await request("post", "/bookings/{id}/cancel", { token, path: { id: 42 }, body: { forfeitDeposit: true } });
  const left = await request("delete", "/slots/{id}/waitlist", { token, path: { id: 7 } });
  if (left.status === 204) seen.push(String(left.data));
  const me = await request("put", "/me", { token, body: { name: "王小美" } });
  if (me.status === 200) seen.push(me.data.customer.phoneMasked ?? "");
  const config = await request("get", "/config", {});
  if (config.status === 200) seen.push(config.data.shopName);
  // A service with a technician: the menu, a day's starts, the reservation
  // (with one technician or any), a move to another start.
  const menu = await request("get", "/services", {});
  if (menu.status === 200) seen.push(...menu.data.services.map((s) => s.name + s.depositFen + s.technicians.map((t) => t.name).join()));
  const starts = await request("get", "/availability", { query: { date: "2026-12-01", serviceId: 3 } });
  if (starts.status === 200) seen.push(...starts.data.starts.map((s) => s.startAt + s.technicians[0].technicianId));
  await request("get", "/availability", { query: { date: "2026-12-01", serviceId: 3, technicianId: 2 } });
  const any = await request("post", "/bookings", { token, body: { serviceId: 3, startAt: "2026-12-01T10:00:00+08:00" } });
  if (any.status === 201) seen.push(any.data.booking.technicianName ?? "seat", String(any.data.booking.priceFen));
  await request("post", "/bookings", { token, body: { serviceId: 3, startAt: "2026-12-01T10:00:00+08:00", technicianId: 2 } });
  const moved = await request("post", "/bookings/{id}/reschedule", { token, path: { id: 42 }, body: { startAt: "2026-12-02T10:00:00+08:00" } });
  if (moved.status === 200) seen.push(String(moved.data.booking.serviceId ?? "seat"));
  const off = await request("post", "/admin/technicians/{id}/off", { token, path: { id: 2 }, body: { date: "2026-12-01", from: "14:00", to: "16:00" } });
  if (off.status === 200) seen.push(String(off.data.closed));
  if (off.status === 409) seen.push(...off.data.bookings.map((b) => String(b.bookingId) + (b.customerName ?? "")));
  // The owner's export: its 200 is the CSV as text (a byte order mark, then
  // a header line in Chinese), its errors the JSON error shape.
  const report = await request("get", "/admin/reports.csv", { token, query: { from: "2026-12-01", to: "2026-12-31" } });
  if (report.status === 200) {
    const csv: string = report.data;
    seen.push(...csv.replace(/^\uFEFF/, "").split("\r\n")[0].split(","));
  }
  if (report.status === 403) seen.push(report.data.code);
  return seen;
}

export async function wrongCalls(token: string): Promise<void> {
  // @ts-expect-error a route the document does not have
  await request("get", "/bookings/all", { token });
  // @ts-expect-error a method the path does not have
  await request("delete", "/bookings/mine", { token });
  // @ts-expect-error slotId is a number
  await request("post", "/bookings", { token, body: { slotId: "42" } });
  // @ts-expect-error a field the body does not have
  await request("post", "/bookings", { token, body: { slotId: 42, seats: 2 } });
  // @ts-expect-error the body is required
  await request("post", "/bookings", { token });
  // @ts-expect-error the path parameter is required
  await request("get", "/bookings/{id}", { token });
  // @ts-expect-error the date is required
  await request("get", "/slots", { query: {} });
  // @ts-expect-error GET /me has no body
  await request("get", "/me", { token, body: { name: "x" } });
  // @ts-expect-error a service needs its start
  await request("post", "/bookings", { token, body: { serviceId: 3 } });
  // @ts-expect-error technicianId is left out for "any", never null
  await request("post", "/bookings", { token, body: { serviceId: 3, startAt: "2026-12-01T10:00:00+08:00", technicianId: null } });
  // @ts-expect-error the service is required
  await request("get", "/availability", { query: { date: "2026-12-01" } });
  // @ts-expect-error staffId may be null only when changing a technician
  await request("post", "/admin/technicians", { token, body: { name: "小美", serviceIds: [3], staffId: null } });
  // @ts-expect-error wx.request has no PATCH: a PATCH route is the console's
  await request("patch", "/admin/technicians/{id}", { token, path: { id: 2 }, body: { staffId: null } });
  // @ts-expect-error no method of wx.request reaches a PATCH-only route
  await request("put", "/admin/slots/{id}", { token, path: { id: 42 }, body: { capacity: 5 } });
  const report = await request("get", "/admin/reports.csv", { token, query: { from: "2026-12-01", to: "2026-12-31" } });
  if (report.status === 200) {
    // @ts-expect-error the CSV is text, not an empty answer
    const none: undefined = report.data;
    // @ts-expect-error the CSV is text, not JSON
    const parsed: { code: string } = report.data;
  }
  const answer = await request("post", "/bookings/{id}/cancel", { token, path: { id: 1 } });
  if (answer.status === 409) {
    // @ts-expect-error an error answer has no booking
    answer.data.booking;
  }
}
