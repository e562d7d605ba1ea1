import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ShardStatusEntity } from 'src/stats/shard-status.entity';
import { StatsController } from 'src/stats/stats.controller';
import { StatsService } from 'src/stats/stats.service';

/** Shard reports from the bot's processes and `GET /bot-stats`. */
@Module({
  imports: [TypeOrmModule.forFeature([ShardStatusEntity])],
  controllers: [StatsController],
  providers: [StatsService],
  exports: [StatsService],
})
export class StatsModule {}
