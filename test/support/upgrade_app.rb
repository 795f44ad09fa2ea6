# frozen_string_literal: true

# Rack apps for the `rack.upgrade` tests: one that upgrades every request it can with a given
# handler, and a handler that hands each client it opens to a queue (so a test, or another
# thread, can write to it and close it from outside its callbacks).
module UpgradeApp
  # @param handler [Object] the `rack.upgrade` handler.
  # @return [#call] a Rack app that sets it on every upgradable request.
  def self.with(handler)
    lambda do |env|
      env["rack.upgrade"] = handler if env["rack.upgrade?"]
      [200, {}, []]
    end
  end

  # @param opened [Queue] receives each client as it opens, and `[:close, pending]` as it closes.
  # @return [Module] the handler.
  def self.handing_to(opened)
    Module.new do
      define_singleton_method(:on_open) { |client| opened << client }
      define_singleton_method(:on_close) { |client| opened << [:close, client.pending] }
    end
  end
end
