# frozen_string_literal: true

module Heron
  module Profiler
    module Sql
      # Prepended to `Sequel::Model::Associations::DatasetMethods`: each association a dataset
      # loads up front (`eager(:books)`, nested `eager(books: :reviews)` too, and each one an
      # `eager_graph` joins) is noted for the request with its owners and where it ran
      # ({EagerLoads}), so one never read is reported as unused eager loading. Installed by
      # {SequelAssociationHook.install}.
      module SequelEagerHook
        # Sequel's builder of the records and their associations from an `eager_graph` query,
        # each association it joined noted after.
        # @param hashes [Array<Hash>] the rows, replaced by the records.
        # @return [Array<Sequel::Model>] the records.
        def eager_graph_build_associations(hashes)
          records = super
          graph = @opts[:eager_graph]
          if graph && !hashes.empty? && Profiler.recorder.recording?
            graph[:reflections].each_value { |reflection| EagerLoads.preloaded(reflection[:model], reflection[:name], hashes.size, :eager_graph) }
          end
          records
        end

        private

        # Sequel's own (private) eager loader for a page of records, noted first.
        def eager_load(records, eager_assoc = @opts[:eager], model = self.model)
          if !records.empty? && eager_assoc && Profiler.recorder.recording?
            eager_assoc.each_key do |name|
              reflection = model.association_reflection(name) or next
              EagerLoads.preloaded(reflection[:model], reflection[:name], records.size, :eager)
            end
          end
          super
        end
      end
    end
  end
end
