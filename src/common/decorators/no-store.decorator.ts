import { Header } from '@nestjs/common';

/**
 * For a route whose answer carries a credential (a session token): no cache, shared or the
 * browser's own, may keep it (RFC 9111 §5.2.2.5).
 */
export const NoStore = (): MethodDecorator => Header('Cache-Control', 'no-store');
