/**
 * What to do when the store's directory cannot be opened, by the file-system
 * error under it: the operator needs a step, not only errno.
 */
export function storeOpenRemedy(path: string, cause: { code?: string; path?: string } | undefined): string | undefined {
  switch (cause?.code) {
    case 'ENOTDIR':
      return `a file stands where a directory must be (${cause.path ?? path}): data/ and data/store must be directories; move that file away and start again`;
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return (
        `the user running noded (uid ${process.getuid?.() ?? '?'}) cannot write ${path}` +
        (cause.code === 'EROFS'
          ? ': the file system is read-only; give the node a writable --home'
          : `: make it the owner (chown -R ${process.getuid?.() ?? '$(id -u)'}:${process.getgid?.() ?? '$(id -g)'} ${path}) or run noded as the user who owns it`)
      );
    case 'ENOSPC':
      return 'the disk is full: free space on it and start again';
    default:
      return undefined;
  }
}
