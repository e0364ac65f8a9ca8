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
  const answer = await request("post", "/bookings/{id}/cancel", { token, path: { id: 1 } });
  if (answer.status === 409) {
    // @ts-expect-error an error answer has no booking
    answer.data.booking;
  }
}
