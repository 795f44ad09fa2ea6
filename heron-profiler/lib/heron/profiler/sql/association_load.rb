# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # The association an ORM is loading lazily for one record, while its query runs: the
      # {Recorder} tags the statements run meanwhile with it, so an N+1 made of them can be
      # advised the way bullet does: `Users::User => [:roles]: add .eager(:roles)`. A count of a
      # has_many (`post.comments.size` not loaded, `post.comments.count`) is advised with a
      # counter cache instead: `Post => [:comments]: add a counter cache (posts.comments_count)`.
      class AssociationLoad
        KEY = :__heron_association_load
        # How each ORM loads an association up front.
        EAGER = { sequel: "eager", active_record: "includes" }.freeze

        # Runs a block with an association load marked on the current fiber (nested loads mark
        # the innermost; the mark is fiber-local, so concurrent requests keep theirs apart).
        # @param model [Class, String] the model whose record reads the association.
        # @param name [Symbol, String] the association.
        # @param adapter [Symbol] :sequel or :active_record.
        # @param remedy [String, nil] other advice than eager loading: "add a counter cache (…)".
        # @yield the load.
        # @return [Object] the block's value.
        def self.around(model, name, adapter, remedy = nil)
          previous = Thread.current[KEY]
          Thread.current[KEY] = new(model, name, adapter, remedy)
          yield
        ensure
          Thread.current[KEY] = previous
        end

        # @return [AssociationLoad, nil] the load under way on the current fiber.
        def self.current
          Thread.current[KEY]
        end

        # @param model [Class, String] see {.around}.
        # @param name [Symbol, String] the association.
        # @return [String] how the advice names them: `Post => [:comments]` (Bullet's words).
        def self.subject(model, name)
          "#{model.is_a?(Module) ? model.name : model} => [#{name.to_sym.inspect}]"
        end

        # @param model [Class, String] see {.around}.
        # @param name [Symbol, String] the association.
        # @param adapter [Symbol] :sequel or :active_record.
        # @param remedy [String, nil] see {.around}.
        def initialize(model, name, adapter, remedy = nil)
          @model = model
          @name = name.to_sym
          @adapter = adapter
          @remedy = remedy
        end

        # @return [String] e.g. "Users::User => [:roles]: add .eager(:roles)".
        def advice
          "#{self.class.subject(@model, @name)}: #{@remedy || "add .#{EAGER.fetch(@adapter, 'eager')}(#{@name.inspect})"}"
        end
      end
    end
  end
end
