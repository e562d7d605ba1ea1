import type { FastifyReply } from 'fastify';

/**
 * On every answer: a browser must take each answer for the type it declares (a JSON error echoing
 * a client's text is never run as a page or a script).
 */
export function withSecurityHeaders(reply: FastifyReply): void {
  void reply.header('X-Content-Type-Options', 'nosniff');
}

/**
 * Swagger UI's pages (`/docs…`): only this origin's scripts run (its bundle and its init file are
 * files, not inline), its inline styles and data: icons load, "Try it out" talks to this origin
 * only, and no other site may frame the page (clickjacking a logged-in operator). A browser test
 * runs the demo under this policy (test/browser/swagger-ui.e2e-spec.ts).
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function withDocsPolicy(reply: FastifyReply): void {
  void reply
    .header('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY)
    .header('X-Frame-Options', 'DENY');
}

/** Whether a request's path is Swagger UI's (`/docs`, `/docs/…`), not the API's. */
export function isDocsPath(url: string): boolean {
  return url === '/docs' || url.startsWith('/docs/') || url.startsWith('/docs?');
}
