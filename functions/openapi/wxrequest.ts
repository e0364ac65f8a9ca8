// wxrequest.ts: a typed wx.request for the mini-program. openapi-fetch needs
// fetch, which a mini-program lacks; this adapter calls wx.request instead and
// takes its types from openapi.d.ts (what openapi-typescript generates from
// the document): each route's path and query parameters, its body and the
// answer of each status are the document's, and a wrong one does not compile.
import type { paths } from "./openapi";

// wx is the global of the official typings (npm miniprogram-api-typings,
// pinned to 5.2.3; the project's tsconfig.json lists it in "types"), not a
// declaration of this file. Their wx.request has no PATCH, so Method is the
// document's methods that wx.request has: the PATCH routes are the salon
// console's, and calling one here does not compile.
type WxMethod = NonNullable<WechatMiniprogram.RequestOption["method"]>;
type Method = Extract<Lowercase<WxMethod>, "get" | "put" | "post" | "delete" | "patch">;

// The paths that have an operation for the method.
type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

type Operation<P extends keyof paths, M extends Method> = paths[P][M];

type PathOf<O> = O extends { parameters: { path: infer X } } ? X : undefined;
type QueryOf<O> = O extends { parameters: { query: infer X } } ? X : undefined;
type BodyOf<O> = O extends { requestBody: { content: { "application/json": infer B } } }
  ? B
  : O extends { requestBody?: infer R }
    ? [NonNullable<R>] extends [never]
      ? undefined // requestBody?: never: the operation takes no body
      : NonNullable<R> extends { content: { "application/json": infer B } }
        ? B | undefined
        : undefined
    : undefined;

// A field the call must give when the operation has it, may leave out when it
// is optional, and cannot give when the operation has none.
type Field<K extends string, T> = [T] extends [undefined]
  ? { [k in K]?: undefined }
  : undefined extends T
    ? { [k in K]?: T }
    : { [k in K]: T };

export type Init<O> = Field<"path", PathOf<O>> &
  Field<"query", QueryOf<O>> &
  Field<"body", BodyOf<O>> & {
    // The session token of POST /login, sent as Authorization: Bearer.
    token?: string;
    header?: Record<string, string>;
  };

// The answer: the status and what the document says comes with it, so that
// checking the status narrows the data (answer.status === 200 gives the
// success shape, 409 the error shape with its codes).
export type Answer<O> = O extends { responses: infer R }
  ? {
      [S in keyof R]: {
        status: S;
        data: DataOf<R[S]>;
      };
    }[keyof R]
  : never;

// What comes with a status: the JSON shape; a string for a text answer (the
// CSV of GET /admin/reports.csv, text/csv); undefined for none (204).
type DataOf<R> = R extends { content: { "application/json": infer D } }
  ? D
  : R extends { content: Record<`text/${string}`, string> }
    ? string
    : undefined;

// The answer's data as Answer types it. wx.request is asked not to parse
// (dataType "其他", any value but "json"), so a text answer stays the string
// it is, a JSON one is parsed here and an empty one (204) is undefined.
function dataOf(res: WechatMiniprogram.RequestSuccessCallbackResult<string>): unknown {
  if (res.data === "") return undefined;
  const name = Object.keys(res.header).find((k) => k.toLowerCase() === "content-type");
  if (name !== undefined && /^text\//i.test(String(res.header[name]))) return res.data;
  return JSON.parse(res.data);
}

function url<O>(base: string, path: string, init: Init<O>): string {
  const params = (init.path ?? {}) as Record<string, string | number>;
  let out = base + path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
  const query = Object.entries((init.query ?? {}) as Record<string, string | number | undefined>)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(String(v)));
  if (query.length > 0) out += "?" + query.join("&");
  return out;
}

// createClient returns request(method, path, init) for the API at base
// (the API Gateway's address with its stage, e.g. https://host/release).
export function createClient(base: string) {
  return function request<M extends Method, P extends PathsWith<M>>(
    method: M,
    path: P,
    init: Init<Operation<P, M>>,
  ): Promise<Answer<Operation<P, M>>> {
    const header: Record<string, string> = { ...init.header };
    if (init.token) header["Authorization"] = "Bearer " + init.token;
    let data: string | undefined;
    if (init.body !== undefined) {
      header["Content-Type"] = "application/json";
      data = JSON.stringify(init.body);
    }
    return new Promise((resolve, reject) => {
      wx.request<string>({
        url: url(base, path, init),
        method: method.toUpperCase() as Uppercase<M>,
        data,
        header,
        dataType: "其他",
        responseType: "text",
        success: (res) => {
          try {
            resolve({ status: res.statusCode, data: dataOf(res) } as Answer<Operation<P, M>>);
          } catch {
            reject(new Error("HTTP " + res.statusCode + ": the answer is not JSON"));
          }
        },
        fail: (err) => reject(new Error(err.errMsg)),
      });
    });
  };
}
