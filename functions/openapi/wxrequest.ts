// wxrequest.ts: a typed wx.request for the mini-program. openapi-fetch needs
// fetch, which a mini-program lacks; this adapter calls wx.request instead and
// takes its types from openapi.d.ts (what openapi-typescript generates from
// the document): each route's path and query parameters, its body and the
// answer of each status are the document's, and a wrong one does not compile.
import type { paths } from "./openapi";

// The part of wx.request used here, declared for this module only: in a
// project with miniprogram-api-typings it shadows the global wx there.
declare const wx: {
  request(option: {
    url: string;
    method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
    data?: string;
    header?: Record<string, string>;
    dataType?: "json";
    success?: (res: { statusCode: number; data: unknown }) => void;
    fail?: (err: { errMsg: string }) => void;
  }): unknown;
};

type Method = "get" | "put" | "post" | "delete" | "patch";

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
        data: R[S] extends { content: { "application/json": infer D } } ? D : undefined;
      };
    }[keyof R]
  : never;

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
      wx.request({
        url: url(base, path, init),
        method: method.toUpperCase() as "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
        data,
        header,
        dataType: "json",
        success: (res) => resolve({ status: res.statusCode, data: res.data } as Answer<Operation<P, M>>),
        fail: (err) => reject(new Error(err.errMsg)),
      });
    });
  };
}
