/**
 * The service's version, as package.json has it: in the API document, the platform user agent and
 * every trace's `service.version` (a test holds the three together).
 */
export const SERVICE_VERSION = '0.2.0';
