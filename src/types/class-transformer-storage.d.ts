// class-transformer ships this module without a declaration of its own path;
// class-validator-jsonschema needs it to see @Type() targets of nested DTOs.
declare module 'class-transformer/cjs/storage' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage';
}
