import { describe, expect, it } from "vitest";
import { ApiError } from "./errors.ts";
import { parseRequestTarget } from "./request-target.ts";

describe("parseRequestTarget", () => {
  it("reads origin-form and absolute-form targets as a path and a query", () => {
    const cases: Array<[string, string, string]> = [
      ["/api/sessions?x=1", "/api/sessions", "?x=1"],
      ["/", "/", ""],
      ["/a%zz/b", "/a%zz/b", ""],
      ["/..%2f/x", "/..%2f/x", ""],
      ["/@evil.example/x", "/@evil.example/x", ""],
      ["http://evil.example/api/health?y", "/api/health", "?y"],
      ["HTTPS://127.0.0.1:8999/", "/", ""],
    ];
    for (const [target, pathname, search] of cases) {
      const url = parseRequestTarget(target);
      expect([url.host, url.pathname, url.search], target).toEqual(["localhost", pathname, search]);
    }
  });

  it("answers 400 for every target that names no path", () => {
    for (const target of ["//[", "//evil.example/api/sessions", "http://[", "http://a%zz/", "http://:80/", "http://a:99999/", "*", "127.0.0.1:80", "ftp://a/", "", "api/x"]) {
      let thrown: unknown;
      try {
        parseRequestTarget(target);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, target).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).status, target).toBe(400);
    }
  });
});
