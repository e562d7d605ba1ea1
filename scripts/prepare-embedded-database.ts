import { embeddedTemplate } from 'src/database/embedded-template';

/**
 * Prepares the initialised PGlite data directory that every new embedded database is copied from
 * (once per PGlite version; later runs find it and return at once), so that the first start of the
 * service does not spend seconds in initdb.
 */
embeddedTemplate().then(
  (directory) => console.log(`Embedded database template ready: ${directory}`),
  (error: unknown) => {
    console.error('Preparing the embedded database template failed:', error);
    process.exitCode = 1;
  },
);
