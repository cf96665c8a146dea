"""Subcommands of the ``biasamp`` CLI, one module each, each with ``register(subparsers)``."""


def add_placement_options(parser) -> None:
    """``--device-map``, ``--max-memory``, ``--offload-folder`` (a model larger than one
    device; ``biasamp probe`` and ``biasamp score``)."""
    parser.add_argument("--device-map", dest="device_map", metavar="MAP",
                        help="auto (or balanced, sequential): accelerate places a model too "
                             "large for one device over the GPUs, the CPU and disk (default: "
                             "none, the whole model on --device)")
    parser.add_argument("--max-memory", dest="max_memory", metavar="LIST",
                        help="with --device-map: the most each device may hold, e.g. "
                             "'0=20GiB,1=20GiB,cpu=60GiB'")
    parser.add_argument("--offload-folder", dest="offload_folder", metavar="DIR",
                        help="with --device-map: where the layers that fit nowhere else go "
                             "(disk)")
