// class-transformer ships the types of its metadata storage apart from its CommonJS build.
declare module 'class-transformer/cjs/storage' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage';
}
