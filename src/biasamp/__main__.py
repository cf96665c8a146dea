import sys

if __name__ == "__main__":  # not when a spawned worker process imports it
    try:
        from .cli import main
    except KeyboardInterrupt:  # Ctrl-C while biasamp is imported: no traceback either
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    sys.exit(main())
