import sys

from workloads.extender_server.server import main

sys.exit(main())
