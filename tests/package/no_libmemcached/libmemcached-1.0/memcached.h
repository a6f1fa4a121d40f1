// SPDX-License-Identifier: MIT
// Stands for libmemcached's header, first in the include path of what must not need
// libmemcached (the placement headers' own check, the placement-only consumers).
#error "memshard: a placement header, or a placement-only user, included libmemcached"
