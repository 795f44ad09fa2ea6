# frozen_string_literal: true

require_relative "../trusted_peer" # the C reads its UNIX_PEER_KEY
require_relative "../extension"

module Heron
  module Profiler
    class Dashboard
      # The loopback rule of {AccessControl}: `LoopbackRule.local?(env)`, whether a request comes
      # from a client on loopback that connected over TCP without any forwarding header
      # (`PROXY_HEADERS`). Every profiled request asks it, so the whole class is C
      # (ext/heron_profiler/profiler_dashboard_loopback_rule.c, where it is documented).
      class LoopbackRule
      end
    end
  end
end
